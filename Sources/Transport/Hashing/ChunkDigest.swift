import COpenSSL
import FoundationEssentials

/// The digest of one chunk for tus's `Upload-Checksum` (base64, as the extension wants).
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

    public var base64: String {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return Data(out.prefix(Int(length))).base64EncodedString()
    }
}
