/// Finds the EXIF chunk of a WebP file (RIFF chunks after the "WEBP" form type).
enum WebPChunks {
    enum Outcome: Equatable {
        case exif([UInt8])
        case missing(String)
    }

    static func exifPayload(in source: any ByteSource, maximumChunks: Int = 64) -> Outcome {
        var offset: UInt64 = 12
        for _ in 0..<maximumChunks {
            let header = source.bytes(at: offset, length: 8)
            guard header.count == 8, let size = header.uint32LE(at: 4) else { return .missing("the WebP file has no EXIF") }
            if header.has("EXIF") {
                let body = source.bytes(at: offset + 8, length: Int(min(size, 1 << 20)))
                // Some writers keep the JPEG-style "Exif\0\0" in front of the TIFF header.
                return .exif(body.has([0x45, 0x78, 0x69, 0x66, 0, 0]) ? Array(body.dropFirst(6)) : body)
            }
            // Chunks are padded to an even length.
            offset += 8 + UInt64(size) + UInt64(size & 1)
        }
        return .missing("no EXIF among the WebP file's first \(maximumChunks) chunks")
    }
}
