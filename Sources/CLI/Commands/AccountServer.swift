import Engine
import FoundationEssentials
import Platform
import Queue
import Transport

/// What `account add` learns about the server before anything is saved: the addresses to
/// keep and the server's profile. From the one address a person typed, discovery finds it
/// out (`ServerDiscovery`); `--webdav` and `--tus` given by hand are checked as they are.
enum AccountServer {
    struct Found {
        var webdavURL: String
        var tusURL: String?
        var profile: ServerProfile
        /// What the person is told, e.g. "Nextcloud 28.0.4, uploads by nextcloud-chunking".
        var summary: String
    }

    /// A server that answered, but not in a way an account can be made of.
    struct Refusal: Error {
        var message: String
        /// The exit status it makes (`ExitStatus`).
        var status: Int32 = ExitStatus.attention
    }

    static func find(_ request: AccountCommands.AddRequest, credentials: Credentials, settings: TransferSettings,
                     account: Account) throws -> Found {
        if let webdav = request.webdavURL, let tus = request.tusURL {
            return try check(webdav: webdav, tus: tus, credentials: credentials, settings: settings, account: account)
        }
        let discovery = try ServerDiscovery(address: request.address ?? "", credentials: credentials)
        settings.prepare(discovery.session, for: account)
        return found(try discovery.discover())
    }

    static func found(_ server: DiscoveredServer) -> Found {
        let kind: ServerProfile.Kind = switch server.kind {
        case .nextcloud: .nextcloud
        case .owncloud: .owncloud
        case .webdav: .webdav
        }
        let method = ServerProfile.UploadMethod(rawValue: server.uploadProtocol.rawValue) ?? .webdavPut
        let profile = ServerProfile(kind: kind, product: server.product, version: server.version,
                                    baseURL: kind == .webdav ? nil : server.baseURL, uploadMethod: method,
                                    uploadsURL: server.uploadsURL, userID: server.userID,
                                    putViaTemporary: server.putPlacement == .viaTemporary,
                                    maxChunkSize: server.uploadProtocol == .tus ? server.capabilities?.tus?.maxChunkSize : nil)
        return Found(webdavURL: server.webdavURL, tusURL: server.tusURL, profile: profile, summary: summary(profile))
    }

    /// "Nextcloud 28.0.4, uploads by nextcloud-chunking"; for plain WebDAV the way a PUT lands.
    static func summary(_ profile: ServerProfile) -> String {
        var text = describe(profile) + ", uploads by " + profile.uploadMethod.rawValue
        switch profile.uploadMethod {
        case .webdavPut:
            text += profile.putViaTemporary ? " (to a temporary name, then moved into place)"
                                            : profile.kind == .webdav ? " (an interrupted upload may leave a partial file until it is sent again)" : ""
        case .tus, .nextcloudChunking:
            break
        }
        return text
    }

    /// "Nextcloud 28.0.4", "Infinite Scale 5.0.5", "WebDAV server".
    static func describe(_ profile: ServerProfile) -> String {
        guard let product = profile.product else { return "WebDAV server" }
        return product + (profile.version.map { " \($0)" } ?? "")
    }

    /// `--webdav URL --tus URL`: tus 1.0 at the one, a folder listing with this password at the other.
    static func check(webdav: String, tus: String, credentials: Credentials, settings: TransferSettings,
                      account: Account) throws -> Found {
        let info: TusServerInfo
        do {
            let client = TusClient(endpoint: tus, credentials: credentials)
            settings.prepare(client.session, for: account)
            info = try client.discover()
        } catch {
            throw Refusal(message: "the tus address \(Log.redact(url: tus)) did not work: \(AccountCommands.explain(error, user: credentials.username))",
                          status: ExitStatus.of(serverError: error))
        }
        guard info.versions.contains("1.0.0") else {
            throw Refusal(message: "the server speaks tus \(info.versions.joined(separator: ", ")), not 1.0.0")
        }
        do {
            let dav = WebDAVClient(root: webdav, credentials: credentials)
            settings.prepare(dav.session, for: account)
            guard try dav.properties(of: "/").isFolder else {
                throw Refusal(message: "the WebDAV address \(Log.redact(url: webdav)) is a file, not a folder")
            }
        } catch let e as Refusal {
            throw e
        } catch {
            throw Refusal(message: "the WebDAV address \(Log.redact(url: webdav)) did not work: \(AccountCommands.explain(error, user: credentials.username))",
                          status: ExitStatus.of(serverError: error))
        }
        var extras: [String] = []
        if let max = info.maxSize { extras.append("up to \(HumanFormat.bytes(max)) per file") }
        if info.checksumAlgorithm != nil { extras.append("chunk checksums") }
        if info.supportsTermination { extras.append("cancel on server") }
        if URL(string: webdav)?.host != URL(string: tus)?.host {
            extras.append("note: the WebDAV and tus addresses are on different hosts; the password is sent to both")
        }
        let profile = ServerProfile(kind: .webdav, uploadMethod: .tus)
        return Found(webdavURL: webdav, tusURL: tus, profile: profile,
                     summary: summary(profile) + (extras.isEmpty ? "" : "; " + extras.joined(separator: ", ")))
    }
}
