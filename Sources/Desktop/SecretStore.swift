import FoundationEssentials
import Glibc
import Platform

/// Where account passwords live: the Secret Service (through `secret-tool`) when the
/// session offers one, else a file only this user can read. Never the database, the
/// config or a log.
public struct SecretStore: Sendable {
    public var paths: XDGPaths

    public init(paths: XDGPaths) { self.paths = paths }

    public enum Backend: String, Sendable { case secretService = "Secret Service", file = "credentials file" }

    var secretTool: String? {
        guard paths.environment["DBUS_SESSION_BUS_ADDRESS"] != nil else { return nil }
        for dir in ["/usr/bin", "/usr/local/bin", "/bin"] where access(dir + "/secret-tool", X_OK) == 0 { return dir + "/secret-tool" }
        return nil
    }

    /// Saves the password and says where it went: the Secret Service when the session offers
    /// one, else the credentials file. A Secret Service that is offered but refuses to store
    /// it (locked, a prompt dismissed, broken) is never passed over silently: `fileAllowed`
    /// is asked, with why, before anything is written to the file, and when it says no,
    /// nothing is saved and this throws `SecretStoreError.keyringRefused`.
    @discardableResult
    public func save(account: String, password: String, fileAllowed: (_ why: String) -> Bool) throws -> Backend {
        if let tool = secretTool {
            let stored = try? run(tool, ["store", "--label=instant-upload: \(account)", "service", "instant-upload", "account", account],
                                  input: password)
            if stored?.status == 0 {
                try? removeFromFile(account)
                return .secretService
            }
            if let address = SessionBus.address(in: paths.environment), SecretService(address: address).isOffered() {
                let said = stored.map { $0.errors.trimmingWhitespace() } ?? ""
                let why = "the keyring (Secret Service) refused to store the password" + (said.isEmpty ? "" : ": \(said)")
                guard fileAllowed(why) else { throw SecretStoreError.keyringRefused(why, file: paths.credentialsFile) }
            }
        }
        var all = try readFile()
        all[account] = password
        try writeFile(all)
        return .file
    }

    /// What a lookup found: the password, the certainty that there is none, or why it
    /// cannot be known right now (a locked keyring, one not started yet).
    public enum Lookup: Sendable, Equatable {
        case found(String)
        case notStored
        case unavailable(String)
    }

    /// Looks the password up in the Secret Service, then in the credentials file. Only a
    /// keyring that answered "none" (or no keyring at all where none is expected) makes it
    /// `notStored`; a keyring that is locked or not there yet makes it `unavailable`, and so
    /// does a credentials file that others could read or change (with the command that
    /// fixes it), when the keyring does not have the password.
    public func lookup(account: String) -> Lookup {
        let inFile = Result { try readFile()[account] }
        func fromFile(otherwise: Lookup) -> Lookup {
            switch inFile {
            case .success(let password?): .found(password)
            case .success(nil): otherwise
            case .failure(let error): .unavailable("\(error)")
            }
        }
        guard let address = SessionBus.address(in: paths.environment) else {
            return fromFile(otherwise: .unavailable("there is no session bus to reach the keyring"))
        }
        switch SecretService(address: address).lookup(["service": "instant-upload", "account": account]) {
        case .found(let password): return .found(password)
        case .notStored: return fromFile(otherwise: .notStored)
        case .unavailable(let why): return fromFile(otherwise: .unavailable(why))
        }
    }

    /// The password when it can be read now, else nil.
    public func password(for account: String) -> String? {
        if case .found(let password) = lookup(account: account) { return password }
        return nil
    }

    public func remove(account: String) {
        if let tool = secretTool { _ = try? run(tool, ["clear", "service", "instant-upload", "account", account], input: nil) }
        try? removeFromFile(account)
    }

    private func removeFromFile(_ account: String) throws {
        var all = try readFile()
        guard all.removeValue(forKey: account) != nil else { return }
        try writeFile(all)
    }

    /// The credentials file's passwords, or none when there is no file. A file that is not
    /// this user's, or that anyone else may read or write, is refused with the command that
    /// fixes it: its passwords are no longer secret, or no longer the person's own.
    private func readFile() throws -> [String: String] {
        let path = paths.credentialsFile
        let file: OpenFile
        do throws(SystemError) { file = try OpenFile(LocalPath(path), O_RDONLY) } catch {
            if error.errno == ENOENT { return [:] }
            throw error
        }
        try Self.checkPrivate(try file.status(), path: path)
        let bytes = try FileIO.readBytes(path)
        try file.close()
        guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(bytes)) else {
            throw SecretStoreError("the credentials file \(path) is damaged; remove it and add the accounts again")
        }
        return decoded
    }

    /// Refuses a credentials file (as `fstat` saw it) that is not a plain file of this user's
    /// with no access for anyone else, naming the command that puts it right.
    static func checkPrivate(_ st: stat, path: String) throws {
        let quoted = ShellWord.quote(path)
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw SecretStoreError("the credentials file \(path) is not a plain file; remove it (`rm -r \(quoted)`) and add the accounts again")
        }
        let mode = st.st_mode & 0o7777
        let others = mode & 0o077
        let ours = st.st_uid == geteuid()
        guard !ours || others != 0 else { return }
        var problems: [String] = []
        var commands: [String] = []
        if !ours {
            let owner = getpwuid(st.st_uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(st.st_uid)"
            problems.append("belongs to \(owner), not to you")
            let me = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? String(geteuid())
            commands.append((geteuid() == 0 ? "" : "sudo ") + "chown \(me) \(quoted)")
        }
        if others != 0 {
            let who = [(0o044 as mode_t, "read"), (0o022 as mode_t, "changed")].filter { mode & $0.0 != 0 }.map(\.1)
            problems.append("can be \(who.joined(separator: " and ")) by others (mode \(String(mode, radix: 8)))")
            commands.append("chmod 600 \(quoted)")
        }
        throw SecretStoreError("the credentials file \(path) \(problems.joined(separator: " and ")), so it is not used: "
                               + "fix it with `\(commands.joined(separator: " && "))`"
                               + (mode & 0o044 != 0 ? ", and change the passwords it holds if anyone else could have read them" : ""),
                               fix: commands.joined(separator: " && "))
    }

    private func writeFile(_ all: [String: String]) throws {
        try PrivateFolder.prepare(paths.configDirectory, role: .config)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try FileIO.writeAtomically(paths.credentialsFile, Array(try encoder.encode(all)), mode: 0o600)
    }

    private func run(_ tool: String, _ arguments: [String], input: String?) throws -> (status: Int32, output: String, errors: String) {
        let finished = try ChildProcess.run(tool, arguments, input: input)
        return (finished?.status ?? -1, finished?.output ?? "", finished?.errors ?? "")
    }
}

/// Why a password could not be kept or read, in words for the person, with what to do.
public struct SecretStoreError: Error, CustomStringConvertible {
    public var description: String
    /// The command that puts it right, when there is one.
    public var fix: String?
    /// The keyring refused to store the password and the credentials file was not allowed.
    public var keyringRefused = false

    init(_ description: String, fix: String? = nil) { self.description = description; self.fix = fix }

    static func keyringRefused(_ why: String, file: String) -> SecretStoreError {
        var e = SecretStoreError("\(why); nothing was saved. Unlock or start the keyring and add the account again, "
                                 + "or add it on a terminal and agree to keep the password in \(file) (readable only by you)")
        e.keyringRefused = true
        return e
    }
}
