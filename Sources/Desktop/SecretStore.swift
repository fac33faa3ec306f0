import Foundation
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

    /// Saves the password and says where it went.
    @discardableResult
    public func save(account: String, password: String) throws -> Backend {
        if let tool = secretTool,
           (try? run(tool, ["store", "--label=instant-upload: \(account)", "service", "instant-upload", "account", account], input: password))?.status == 0 {
            try? removeFromFile(account)
            return .secretService
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
    /// `notStored`; a keyring that is locked or not there yet makes it `unavailable`.
    public func lookup(account: String) -> Lookup {
        let inFile = (try? readFile())?[account]
        guard let address = SessionBus.address(in: paths.environment) else {
            return inFile.map(Lookup.found) ?? .unavailable("there is no session bus to reach the keyring")
        }
        switch SecretService(address: address).lookup(["service": "instant-upload", "account": account]) {
        case .found(let password): return .found(password)
        case .notStored: return inFile.map(Lookup.found) ?? .notStored
        case .unavailable(let why): return inFile.map(Lookup.found) ?? .unavailable(why)
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

    private func readFile() throws -> [String: String] {
        let path = paths.credentialsFile
        guard FileIO.exists(path) else { return [:] }
        let bytes = try FileIO.readBytes(path)
        guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(bytes)) else {
            throw SecretStoreError("the credentials file \(path) is damaged; remove it and add the accounts again")
        }
        return decoded
    }

    private func writeFile(_ all: [String: String]) throws {
        try PrivateFolder.prepare(paths.configDirectory, role: .config)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try FileIO.writeAtomically(paths.credentialsFile, Array(try encoder.encode(all)), mode: 0o600)
    }

    private func run(_ tool: String, _ arguments: [String], input: String?) throws -> (status: Int32, output: String) {
        let finished = try ChildProcess.run(tool, arguments, input: input)
        return (finished?.status ?? -1, finished?.output ?? "")
    }
}

public struct SecretStoreError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
