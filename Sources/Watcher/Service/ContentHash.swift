import Glibc
import Platform
import Transport

/// The SHA-256 of a file as it is now, read in bounded blocks.
enum ContentHash {
    /// The hex SHA-256 of the regular file at `path`, if it is still the file `fingerprint`
    /// describes before and after reading; nil when it changed, went away or cannot be read.
    static func sha256(of path: LocalPath, expecting fingerprint: FileFingerprint) -> String? {
        do {
            let file = try OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            guard try FileFingerprint.of(descriptor: file.descriptor) == fingerprint else { return nil }
            let sha = RunningSHA256()
            try FileIO.readBlocks(file.descriptor, from: 0, length: fingerprint.size, path: path.display) { sha.update($0) }
            guard try FileFingerprint.of(descriptor: file.descriptor) == fingerprint else { return nil }
            try file.close()
            return sha.hexDigest
        } catch {
            return nil
        }
    }
}
