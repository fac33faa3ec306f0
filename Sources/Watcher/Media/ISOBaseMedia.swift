/// Boxes of the ISO base media file format (MP4, QuickTime, HEIF, CR3).
///
/// Every size and offset comes from the file, so all arithmetic is checked: a box whose
/// end overflows or lies beyond its container ends the walk, and walks stop after a fixed
/// number of boxes.
struct Box: Equatable {
    var type: String
    /// Where the box starts (its header), and where its payload starts and ends.
    var start: UInt64
    var payloadStart: UInt64
    var end: UInt64

    var payloadLength: UInt64 { end - payloadStart }
}

enum ISOBaseMedia {
    /// The boxes in `range` of `source`, in order; at most `limit`. A box running past the
    /// end of its container is cut to it and ends the list (a file cut short keeps the
    /// boxes before).
    static func boxes(in source: any ByteSource, from start: UInt64, to end: UInt64, limit: Int = 1024) -> [Box] {
        var boxes: [Box] = []
        var offset = start
        let end = min(end, source.count)
        while boxes.count < limit, end >= 8, offset <= end - 8 {
            let header = source.bytes(at: offset, length: 16)
            guard let size32 = header.uint32BE(at: 0), header.count >= 8 else { break }
            let type = String(decoding: header.slice(4, 4), as: UTF8.self)
            var headerLength: UInt64 = 8
            var size = UInt64(size32)
            if size32 == 1 {
                guard let large = header.uint64BE(at: 8) else { break }
                size = large
                headerLength = 16
            } else if size32 == 0 {
                size = end - offset  // to the end of the container
            }
            guard size >= headerLength else { break }
            let (boxEnd, overflow) = offset.addingReportingOverflow(size)
            if overflow || boxEnd > end {
                boxes.append(Box(type: type, start: offset, payloadStart: min(offset + headerLength, end), end: end))
                break
            }
            boxes.append(Box(type: type, start: offset, payloadStart: offset + headerLength, end: boxEnd))
            offset = boxEnd
        }
        return boxes
    }

    /// The children of `box`; `skip` leading payload bytes (4 for a FullBox's version and flags).
    static func children(of box: Box, in source: any ByteSource, skip: UInt64 = 0, limit: Int = 1024) -> [Box] {
        guard box.payloadLength >= skip else { return [] }
        return boxes(in: source, from: box.payloadStart + skip, to: box.end, limit: limit)
    }

    /// The first box of `type` among `boxes`.
    static func first(_ type: String, in boxes: [Box]) -> Box? { boxes.first { $0.type == type } }
}
