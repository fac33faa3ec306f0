import Platform
import Queue
import Testing

@Suite("A transfer's remote folder and name")
struct TransferPathTests {
    @Test("the folder is the path up to its last slash, as the server splits it, even before a name that starts with a combining mark",
          arguments: [("/Photos/2026/IMG_0001.jpg", "/Photos/2026"), ("/IMG_0001.jpg", "/"), ("IMG_0001.jpg", "/"),
                      ("/Fotos/\u{301}x.jpg", "/Fotos"), ("/Fotos é/ü.jpg", "/Fotos é"), ("/a/b/", "/a/b")])
    func folder(path: String, folder: String) {
        let row = Transfer(id: 1, direction: .upload, localPath: LocalPath("/tmp/x"), remotePath: path)
        #expect(row.remoteFolder == folder)
    }

    @Test("the name is what follows the folder's slash, even when it starts with a combining mark",
          arguments: [("/Photos/2026/IMG_0001.jpg", "IMG_0001.jpg"), ("/IMG_0001.jpg", "IMG_0001.jpg"), ("IMG_0001.jpg", "IMG_0001.jpg"),
                      ("/Fotos/\u{301}x.jpg", "\u{301}x.jpg"), ("/Fotos é/ü.jpg", "ü.jpg"), ("/a/b/", "b"), ("/", "/")])
    func name(path: String, name: String) {
        let row = Transfer(id: 1, direction: .download, localPath: LocalPath("/tmp/x"), remotePath: path)
        #expect(row.remoteName == name)
        #expect(row.name == name)
    }
}
