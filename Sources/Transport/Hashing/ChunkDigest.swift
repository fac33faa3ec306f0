import COpenSSL
import FoundationEssentials

/// The digest of one chunk: for tus's `Upload-Checksum` (base64, as the extension wants), or
/// for Nextcloud's `OC-Checksum` of a file sent in one PUT (hex).
public final class ChunkDigest {
    private let context: OpaquePointer

    public init(_ algorithm: ChecksumAlgorithm) {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, algorithm == .sha256 ? EVP_sha256() : EVP_sha1(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest, in base64 (tus's `Upload-Checksum`).
    public var base64: String { Self.base64(final) }

    /// A digest in base64.
    public static func base64(_ digest: [UInt8]) -> String { Data(digest).base64EncodedString() }

    /// The digest.
    public var bytes: [UInt8] { final }

    /// The digest, in lowercase hex (Nextcloud's `OC-Checksum: SHA256:<hex>`).
    public var hex: String { final.lowercaseHex }

    /// The digest: finalised the first time it is asked for (OpenSSL finalises only once).
    private lazy var final: [UInt8] = {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return Array(out.prefix(Int(length)))
    }()
}
