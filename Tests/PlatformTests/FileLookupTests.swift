import Glibc
import Platform
import Testing
import TestSupport

@Suite("What the kernel says about a file: its writers, its identity, its real path")
struct FileLookupTests {
    @Test("a writer holding the file open is seen, whoever it is; once it closed, nobody is")
    func writerSeen() throws {
        let folder = TemporaryFolder("iu-lease")
        let path = LocalPath(try folder.file("IMG_1.jpg", bytes: [1, 2, 3]))
        let writer = try FileIO.open(path, O_WRONLY | O_APPEND)
        let reader = try OpenFile(path, O_RDONLY)
        #expect(FileIO.writers(of: reader.descriptor, path: path) == .some)
        try FileIO.close(writer, path: path)
        // A process that another test spawns at this moment holds every descriptor of this
        // one (close-on-exec or not) until its exec: wait that out, with a deadline.
        var answer = FileIO.writers(of: reader.descriptor, path: path)
        for _ in 0..<100 where answer != .none {
            usleep(20_000)
            answer = FileIO.writers(of: reader.descriptor, path: path)
        }
        #expect(answer == .none)
        // Asked again and again: each lease is given back.
        #expect(FileIO.writers(of: reader.descriptor, path: path) == .none)
        let again = try FileIO.open(path, O_WRONLY | O_APPEND)
        try FileIO.close(again, path: path)
        try reader.close()
    }

    @Test("one identity for a folder however it is reached: through a link or `..`")
    func identity() throws {
        let folder = TemporaryFolder("iu-identity")
        try FileIO.makeFolder(LocalPath(folder.path + "/Camera"), mode: 0o755)
        #expect(symlink(folder.path + "/Camera", folder.path + "/CamLink") == 0)
        let camera = try FileIdentity.of(LocalPath(folder.path + "/Camera"))
        #expect(try FileIdentity.of(LocalPath(folder.path + "/CamLink")) == camera)
        #expect(try FileIdentity.of(LocalPath(folder.path + "/CamLink/../Camera")) == camera)
        #expect(try FileIO.realPath(LocalPath(folder.path + "/CamLink")) == FileIO.realPath(LocalPath(folder.path + "/Camera")))
        #expect(try !FileIO.makeFolder(LocalPath(folder.path + "/Camera"), mode: 0o755), "a folder already there is no error")
    }
}
