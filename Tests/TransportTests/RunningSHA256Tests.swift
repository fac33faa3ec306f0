import TestSupport
import Testing
import Transport

@Suite("The running SHA-256")
struct RunningSHA256Tests {
    static let knownEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let knownABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    func hash(_ bytes: [UInt8], into sha: RunningSHA256) { bytes.withUnsafeBytes { sha.update($0) } }

    @Test("matches the standard test vectors")
    func vectors() {
        #expect(RunningSHA256().hexDigest == Self.knownEmpty)
        let sha = RunningSHA256()
        hash(Array("abc".utf8), into: sha)
        #expect(sha.hexDigest == Self.knownABC)
    }

    @Test("a state saved at any byte and restored elsewhere gives the same digest", arguments: [0, 1, 55, 63, 64, 65, 1000, 4096])
    func saveAndRestore(split: Int) throws {
        let data = TestData.bytes(count: 5000, seed: 7)
        let whole = RunningSHA256()
        hash(data, into: whole)
        let first = RunningSHA256()
        hash(Array(data[..<split]), into: first)
        let saved = first.state
        let resumed = try #require(RunningSHA256(state: saved))
        #expect(resumed.count == Int64(split))
        hash(Array(data[split...]), into: resumed)
        #expect(resumed.hexDigest == whole.hexDigest)
    }

    @Test("reading the digest does not disturb the running state")
    func digestIsNonDestructive() {
        let sha = RunningSHA256()
        hash(Array("ab".utf8), into: sha)
        _ = sha.hexDigest
        hash(Array("c".utf8), into: sha)
        #expect(sha.hexDigest == Self.knownABC)
    }

    @Test("a damaged or foreign state is refused, not trusted")
    func refusesBadState() {
        var state = RunningSHA256().state
        #expect(RunningSHA256(state: []) == nil)
        #expect(RunningSHA256(state: Array(state.dropLast())) == nil)
        state[0] = 99
        #expect(RunningSHA256(state: state) == nil)
    }
}
