import Foundation

/// tus 1.0 behind `UploadProtocol`: the handle is the upload's URL; the chunk that reaches
/// the length completes the file, so `finish` has nothing left to do.
public final class TusUpload: UploadProtocol {
    public let client: TusClient
    public var session: HTTPSession { client.session }

    public init(endpoint: String, credentials: Credentials?) {
        client = TusClient(endpoint: endpoint, credentials: credentials)
    }

    public func capabilities() throws -> UploadCapabilities {
        let info = try client.discover()
        // Without checksums a broken PATCH keeps what arrived; with them the server checks
        // the whole body first, but some servers still keep a prefix: never assume either.
        return UploadCapabilities(maxSize: info.maxSize, chunkChecksum: info.checksumAlgorithm, keepsPartialChunks: true,
                                  lastChunkFinishes: true)
    }

    public func start(_ target: UploadTarget) throws -> UploadStanding.Started {
        let metadata = [("filename", target.name), ("filetype", target.contentType),
                        ("path", String(target.remotePath.drop(while: { $0 == "/" })))]
        let created = try client.create(length: target.length, metadata: metadata)
        return UploadStanding.Started(handle: created.url, expiresAt: created.expiresAt)
    }

    public func status(of handle: String, confirmed: Int64) throws -> UploadStanding {
        do {
            let status = try client.status(of: handle, confirmed: confirmed)
            return .holds(offset: status.offset, length: status.length, expiresAt: status.expiresAt)
        } catch let e as HTTPStatusError where e.status == 404 || e.status == 410 {
            return .forgotten(expired: e.status == 410)
        }
    }

    public func send(_ body: RequestBody, to handle: String, at offset: Int64,
                     checksum: (ChecksumAlgorithm, String)?) throws -> UploadStanding.Confirmed {
        let result = try client.patch(url: handle, offset: offset, body: body, checksum: checksum)
        return UploadStanding.Confirmed(offset: result.offset, expiresAt: result.expiresAt)
    }

    public func finish(_ handle: String, as target: UploadTarget) throws {}

    public func abandon(_ handle: String) throws { try client.terminate(handle) }
}
