import COpenSSL

/// A SHA-256 of a whole file computed piece by piece, whose state can be saved between
/// chunks and restored in another process, so a resumed upload hashes only new bytes.
///
/// Uses OpenSSL's SHA256_CTX, the one context whose fields are public (and which uses
/// the SHA extensions where the CPU has them). The saved form is explicit, field by field,
/// little-endian, behind a format version, never a memory dump.
public final class RunningSHA256: RestartableObserver {
    private var context = SHA256_CTX()
    /// How many bytes the hash covers.
    public private(set) var count: Int64 = 0

    public static let stateVersion: UInt8 = 1

    public init() { SHA256_Init(&context) }

    /// Restores a saved state; nil when the bytes are not a state this version wrote.
    public init?(state: [UInt8]) {
        var reader = StateReader(bytes: state)
        guard reader.byte() == Self.stateVersion else { return nil }
        var ctx = SHA256_CTX()
        guard let h = reader.words(8), let nl = reader.word(), let nh = reader.word(),
              let data = reader.words(16), let num = reader.word(), let mdLen = reader.word(), reader.atEnd,
              num < 64, mdLen == 32 else { return nil }
        withUnsafeMutableBytes(of: &ctx.h) { $0.withMemoryRebound(to: UInt32.self) { for i in 0..<8 { $0[i] = h[i] } } }
        withUnsafeMutableBytes(of: &ctx.data) { $0.withMemoryRebound(to: UInt32.self) { for i in 0..<16 { $0[i] = data[i] } } }
        ctx.Nl = nl
        ctx.Nh = nh
        ctx.num = num
        ctx.md_len = mdLen
        context = ctx
        // Nh:Nl is the length in bits.
        count = Int64((UInt64(nh) << 32 | UInt64(nl)) / 8)
    }

    /// The state to persist with a checkpoint.
    public var state: [UInt8] {
        var out: [UInt8] = [Self.stateVersion]
        out.reserveCapacity(113)
        func put(_ w: UInt32) { withUnsafeBytes(of: w.littleEndian) { out.append(contentsOf: $0) } }
        var ctx = context
        withUnsafeBytes(of: &ctx.h) { $0.withMemoryRebound(to: UInt32.self) { $0.forEach(put) } }
        put(ctx.Nl)
        put(ctx.Nh)
        withUnsafeBytes(of: &ctx.data) { $0.withMemoryRebound(to: UInt32.self) { $0.forEach(put) } }
        put(ctx.num)
        put(ctx.md_len)
        return out
    }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        SHA256_Update(&context, base, bytes.count)
        count += Int64(bytes.count)
    }

    public func observe(_ bytes: UnsafeRawBufferPointer) { update(bytes) }

    /// Forgets every byte: a hash of nothing, for a file that starts again from byte 0.
    public func startOver() {
        SHA256_Init(&context)
        count = 0
    }

    /// The digest so far, as lower-case hex, without disturbing the running state.
    public var hexDigest: String {
        var copy = context
        var digest = [UInt8](repeating: 0, count: 32)
        SHA256_Final(&digest, &copy)
        return digest.lowercaseHex
    }

    /// The digest so far as raw bytes.
    public var digest: [UInt8] {
        var copy = context
        var digest = [UInt8](repeating: 0, count: 32)
        SHA256_Final(&digest, &copy)
        return digest
    }
}

private struct StateReader {
    let bytes: [UInt8]
    var index = 0
    var atEnd: Bool { index == bytes.count }
    mutating func byte() -> UInt8? {
        guard index < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[index]
    }
    mutating func word() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        defer { index += 4 }
        return UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
    }
    mutating func words(_ n: Int) -> [UInt32]? {
        var out: [UInt32] = []
        for _ in 0..<n { guard let w = word() else { return nil }; out.append(w) }
        return out
    }
}

extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

extension Sequence<UInt8> {
    /// The bytes as lower-case hex, two digits each (digests in `OC-Checksum`, the queue, logs).
    var lowercaseHex: String {
        var out: [UInt8] = []
        out.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0xf))
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The lower-case hex digit of `value` (0-15). A digest is turned into hex several times
/// per photo; a table built as an array at each digit made it three allocations a byte.
@inline(__always)
private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "a") &+ (value &- 10)
}
