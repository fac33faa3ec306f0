import Desktop
import Queue
import Transport

/// The folder picker's view of one account's server: folders listed with PROPFIND
/// (Depth 1) and created with MKCOL, errors in the person's words.
final class WebDAVFolders: RemoteFolders {
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    let account: Account
    let caFile: String?
    let password: () -> String?
    /// Made when the picker first shows this account: the password is looked up only then.
    private lazy var client: WebDAVClient = {
        let client = WebDAVClient(root: account.webdavURL,
                                  credentials: password().map { Credentials(username: account.username, password: $0) })
        client.session.caFile = account.caFile ?? caFile
        return client
    }()
    var username: String { account.username }

    init(account: Account, caFile: String?, password: @escaping () -> String?) {
        self.account = account
        self.caFile = caFile
        self.password = password
    }

    /// Read as the listing comes: a folder of thousands of photos keeps only its folders.
    func subfolders(of folder: String) throws -> [String] {
        var names: [String] = []
        do {
            try client.eachItem(in: folder, details: false) { item in
                if item.isFolder { names.append(item.name) }
                return true
            }
        } catch {
            throw Problem(description: AccountCommands.explain(error, user: username))
        }
        return names
    }

    func makeFolder(_ path: String) throws {
        do { try client.makeFolder(path) } catch let e as WrongRemoteKind {
            throw Problem(description: "a file with that name is already there (\(e.path))")
        } catch {
            throw Problem(description: AccountCommands.explain(error, user: username))
        }
    }
}
