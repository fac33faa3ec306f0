import Testing
@testable import Engine

@Suite("A folder's listing, remembered")
struct FolderNamesTests {
    @Test("100,000 names kept as hashes: each listed or made name is found, and names never listed almost never are")
    func names() {
        let listed = (0..<100_000).map { "/Photos/IMG_\($0).jpg" }
        var names = FolderNames(hashes: listed.map(FolderNames.hash))
        #expect(listed.allSatisfy(names.contains))
        #expect(!names.contains("/Photos/IMG_100000.jpg"))
        // A name looking taken that is not costs a look at the server, never a file: a few
        // in a million would be harmless, and 64-bit hashes give about none.
        let strangers = (0..<100_000).filter { names.contains("/Photos/other_\($0).jpg") }
        #expect(strangers.count <= 1)
        names.insert("/Photos/IMG_100000.jpg")
        #expect(names.contains("/Photos/IMG_100000.jpg") && names.count == 100_001)
        #expect(!FolderNames(hashes: []).contains("/Photos/IMG_0.jpg"))
    }

    @Test("a folder too long to keep is taken to hold any name, and not listed again for a while; a kept one is listed once for many looks")
    func tooLong() throws {
        let cache = ServerInfoCache()
        var listings = 0
        for _ in 0..<3 {
            #expect(try cache.mayHold("/Big/a.jpg", in: "/Big", of: "t") { listings += 1; return nil })
        }
        #expect(listings == 1)
        for name in ["a.jpg", "b.jpg", "c.jpg"] {
            let held = try cache.mayHold("/Small/" + name, in: "/Small", of: "t") {
                listings += 1
                return FolderNames(hashes: [FolderNames.hash("/Small/b.jpg")])
            }
            #expect(held == (name == "b.jpg"), "\(name)")
        }
        #expect(listings == 2)
        cache.noteMade("/Small/c.jpg", in: "/Small", of: "t")
        #expect(try cache.mayHold("/Small/c.jpg", in: "/Small", of: "t") { listings += 1; return nil })
        #expect(listings == 2)
    }
}
