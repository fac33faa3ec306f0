import CSystem
import Glibc
import Testing

/// The loader behind libcurl and libexif (`csystem_library_load`): what it says when the
/// library or one of its functions is missing, and that it looks only once.
@Suite("a library loaded on first use")
struct LibraryLoadTests {
    /// Loads `soname` for `functions`, twice; the two answers, and whether every function's
    /// address was filled in.
    private static func load(_ soname: String, _ functions: [String]) -> (String?, String?, filled: Bool) {
        let names = functions.map { strdup($0)! }
        let soname = strdup(soname)!, package = strdup("the-package")!
        defer { (names + [soname, package]).forEach { free($0) } }
        let slots = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: max(1, functions.count))
        slots.initialize(repeating: nil, count: max(1, functions.count))
        defer { slots.deallocate() }
        let symbols = (0..<functions.count).map { csystem_symbol(name: names[$0], slot: slots + $0) }
        return symbols.withUnsafeBufferPointer { table in
            var library = csystem_library()
            library.soname = UnsafePointer(soname)
            library.package = UnsafePointer(package)
            library.symbols = table.baseAddress
            library.count = functions.count
            let first = csystem_library_load(&library).map { String(cString: $0) }
            let second = csystem_library_load(&library).map { String(cString: $0) }
            return (first, second, (0..<functions.count).allSatisfy { slots[$0] != nil })
        }
    }

    @Test("a library that is there, with its functions: no complaint, and the address is kept")
    func found() {
        let (first, second, filled) = Self.load("libc.so.6", ["strlen"])
        #expect(first == nil && second == nil)
        #expect(filled)
    }

    @Test("a missing library, or a function it lacks, is named with the package to install, the same on every call")
    func missing() {
        let (absent, again, _) = Self.load("libnot-there.so.1", ["f"])
        #expect(absent?.hasPrefix("libnot-there.so.1 could not be loaded (") == true, "\(absent ?? "nil")")
        #expect(absent?.hasSuffix("); install the package the-package") == true, "\(absent ?? "nil")")
        #expect(again == absent)
        let (lacking, _, _) = Self.load("libc.so.6", ["strlen", "no_such_function_here"])
        #expect(lacking?.hasPrefix("libc.so.6 has no no_such_function_here (") == true, "\(lacking ?? "nil")")
        #expect(lacking?.hasSuffix("); install the package the-package again") == true, "\(lacking ?? "nil")")
    }
}
