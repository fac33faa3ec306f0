/// Walks the marker segments at the start of a JPEG to find its EXIF (APP1 "Exif\0\0").
enum JPEGSegments {
    enum Outcome: Equatable {
        /// The TIFF structure inside the APP1 segment.
        case exif([UInt8])
        case missing(String)
    }

    /// Looks at no more than `maximumSegments` segments before the image data starts.
    static func exifPayload(in source: any ByteSource, maximumSegments: Int = 128) -> Outcome {
        guard source.bytes(at: 0, length: 2) == [0xFF, 0xD8] else { return .missing("not a JPEG") }
        var offset: UInt64 = 2
        for _ in 0..<maximumSegments {
            let header = source.bytes(at: offset, length: 4)
            guard header.count >= 2, header[0] == 0xFF else { return .missing("the JPEG's segments are damaged before any EXIF") }
            let marker = header[1]
            switch marker {
            case 0xFF:
                offset += 1  // fill byte
                continue
            case 0xD8, 0x01, 0xD0...0xD7:
                offset += 2  // markers without a length
                continue
            case 0xDA, 0xD9:
                return .missing("the JPEG has no EXIF")
            default:
                break
            }
            guard let length = header.uint16BE(at: 2), length >= 2 else { return .missing("a JPEG segment has an impossible length") }
            if marker == 0xE1 {
                let body = source.bytes(at: offset + 4, length: Int(length) - 2)
                if body.has([0x45, 0x78, 0x69, 0x66, 0, 0]) { return .exif(Array(body.dropFirst(6))) }
            }
            offset += 2 + UInt64(length)
        }
        return .missing("no EXIF among the JPEG's first \(maximumSegments) segments")
    }
}
