@testable import Desktop
import Testing

@Suite("Subfolders in the picker's order")
struct NaturalOrderTests {
    @Test("digits by their value, letters without regard to case, and one order whatever the server's")
    func order() {
        let names = ["Photos 10", "photos 2", "Photos 1", "album", "Album", "2024", "202", "IMG_0009", "IMG_10", "Zebra", "été"]
        let expected = ["202", "2024", "Album", "album", "IMG_0009", "IMG_10", "Photos 1", "photos 2", "Photos 10", "Zebra", "été"]
        #expect(names.sorted(by: NaturalOrder.precedes) == expected)
        #expect(names.reversed().sorted(by: NaturalOrder.precedes) == expected)
    }
}
