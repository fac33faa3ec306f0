/// What a Nextcloud or ownCloud server says about itself at `status.php` (no login needed).
public struct ServerStatus: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case nextcloud
        /// ownCloud 10 and ownCloud Infinite Scale.
        case owncloud
    }

    public var kind: Kind
    /// `productname` as the server gives it (`Nextcloud`, `ownCloud`, `Infinite Scale`), made safe to show.
    public var product: String
    /// `productversion` (Infinite Scale), else `versionstring`, else `version`: digits and dots only.
    public var version: String?
    /// True while the administrator has the server in maintenance mode.
    public var maintenance: Bool

    public init(kind: Kind, product: String, version: String?, maintenance: Bool) {
        self.kind = kind; self.product = product; self.version = version; self.maintenance = maintenance
    }

    /// Reads a status.php reply; nil when it is not one (another server's page, another JSON).
    static func parse(_ bytes: [UInt8]) throws(ProtocolViolation) -> ServerStatus? {
        guard let json = try? ServerJSON(bytes, source: "status.php"),
              json.has(["installed"]) || json.has(["productname"]) else { return nil }
        let productName = try json.string(["productname"], maxLength: 200)
        let productAlone = try json.string(["product"], maxLength: 200)
        let product = productName ?? productAlone ?? ""
        let kind: Kind
        if product.lowercased().contains("nextcloud") {
            kind = .nextcloud
        } else if product.lowercased().contains("owncloud") || product.lowercased().contains("infinite scale") {
            kind = .owncloud
        } else if product.isEmpty {
            // Nextcloud before 12 and ownCloud before 10 named no product; both speak the same API.
            kind = .owncloud
        } else {
            return nil
        }
        // Infinite Scale's own version is `productversion`; its `versionstring` is the
        // ownCloud 10 it answers like (10.11.0), which is not what its people know it by.
        // A build's `productversion` such as 7.0.0-rc.1 falls back to that.
        var version = (try? json.string(["productversion"], maxLength: 40)).flatMap { Self.isVersion($0) ? $0 : nil }
        if version == nil { version = try json.string(["versionstring"], maxLength: 40) }
        if version == nil { version = try json.string(["version"], maxLength: 40) }
        if let v = version, !Self.isVersion(v) {
            throw ProtocolViolation("status.php gives the version `\(ServerJSON.shown(v))`, which is not a version number")
        }
        if version?.isEmpty == true { version = nil }
        return ServerStatus(kind: kind, product: ServerJSON.shown(product.isEmpty ? kind.rawValue : product),
                            version: version, maintenance: try json.flag(["maintenance"]) ?? false)
    }

    private static func isVersion(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
    }
}
