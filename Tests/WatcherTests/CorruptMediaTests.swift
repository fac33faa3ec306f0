import Testing
import TestSupport
@testable import Watcher

/// Damaged and hostile files: the date falls back to the mtime with a reason, and nothing
/// crashes, loops or reads without bound.
@Suite("Damaged media")
struct CorruptMediaTests {
    static let mtime: Int64 = 1_500_000_000 * 1_000_000_000

    func fallback(_ bytes: [UInt8], name: String = "f") -> String? {
        guard let info = MediaInspector.inspect(bytes: bytes, name: Array(name.utf8), modificationTimeNanoseconds: Self.mtime) else { return nil }
        guard info.captureDate.source == .modificationTime, info.captureDate.moment == .instant(unixSeconds: 1_500_000_000) else { return nil }
        return info.captureDate.fallbackReason
    }

    static func bigEndian32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * (3 - $0))) } }

    @Test("EXIF dates that are not dates fall back to the mtime, saying so")
    func unusableExifDates() throws {
        let zero = try #require(fallback(MediaFiles.photo("0000:00:00 00:00:00")))
        #expect(zero.contains("DateTimeOriginal"))
        #expect(fallback(MediaFiles.photo("garbage garbage garb")) != nil)
        #expect(fallback(MediaFiles.photo("2023:02:30 10:00:00")) != nil, "February has no 30th")
        #expect(fallback(MediaFiles.jpeg(exif: MediaFiles.tiff(exif: [.ascii(0x9010, "+01:00")]))) != nil)
    }

    @Test("an offset that is not an offset is dropped, the date kept")
    func badOffset() throws {
        let info = try #require(MediaInspector.inspect(bytes: MediaFiles.photo("2023:07:14 09:30:00", offset: "+99:99")))
        #expect(info.captureDate.moment == .wallClock(CalendarFields(year: 2023, month: 7, day: 14, hour: 9, minute: 30), utcOffsetSeconds: nil))
    }

    @Test("damaged JPEG segments and EXIF structures")
    func damagedJPEG() {
        // An APP1 that claims more bytes than the file has.
        #expect(fallback([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif".utf8) + [0, 0, 0x49, 0x49]) != nil)
        // A segment length below 2.
        #expect(fallback([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0xFF, 0xD9]) != nil)
        // EXIF whose IFD offset points far outside it.
        var exif = MediaFiles.exif(dateTimeOriginal: "2023:07:14 09:30:00")
        exif.replaceSubrange(4..<8, with: [0xF0, 0xFF, 0xFF, 0x7F])
        #expect(fallback(MediaFiles.jpeg(exif: exif)) != nil)
        // The EXIF IFD pointer aimed at IFD0 itself (a loop).
        var loop = MediaFiles.exif(dateTimeOriginal: "2023:07:14 09:30:00")
        if let at = (0..<(loop.count - 12)).first(where: { loop[$0] == 0x69 && loop[$0 + 1] == 0x87 }) {
            loop.replaceSubrange((at + 8)..<(at + 12), with: [8, 0, 0, 0])
        }
        #expect(fallback(MediaFiles.jpeg(exif: loop)) != nil)
    }

    @Test("damaged ISO boxes: sizes, counts and offsets that lie")
    func damagedBoxes() {
        let exif = MediaFiles.exif(dateTimeOriginal: "2022:01:02 03:04:05")
        let heic = MediaFiles.heic(exif: exif)
        // The Exif item's extent points past the end of the file.
        var outside = heic
        if let at = Self.find(Self.bigEndian32(UInt32(heic.count - exif.count - 10)), in: heic) {
            outside.replaceSubrange(at..<(at + 4), with: [0x7F, 0xFF, 0xFF, 0xF0])
        }
        #expect(fallback(outside) != nil)
        // A meta box that claims 2^64-1 bytes through a 64-bit size.
        let hugeMeta = MediaFiles.box("ftyp", Array("heic".utf8) + [0, 0, 0, 0]) + Self.bigEndian32(1) + Array("meta".utf8)
            + [UInt8](repeating: 0xFF, count: 8) + [UInt8](repeating: 0, count: 32)
        #expect(fallback(hugeMeta) != nil)
        // A box smaller than its own header.
        #expect(fallback(MediaFiles.box("ftyp", Array("isom".utf8) + [0, 0, 0, 0] + Array("isom".utf8)) + [0, 0, 0, 3] + Array("moov".utf8)) != nil)
        // A movie header cut short, one of an unknown version, one with no date.
        let movie = MediaFiles.movie(creation: 1_700_000_000, moovFirst: true)
        let mvhd = Self.find(Array("mvhd".utf8), in: movie)!
        #expect(fallback(Array(movie.prefix(mvhd + 8))) != nil)
        var version = movie
        version[mvhd + 4] = 7
        #expect(fallback(version) != nil)
        #expect(fallback(MediaFiles.movie(creation: -2_082_844_800)) != nil, "a creation time of 0 is no date")
    }

    @Test("no input makes the readers work without bound")
    func boundedWork() {
        // A hundred thousand empty boxes and no movie box: the walk stops, the reads are counted.
        var many = MediaFiles.box("ftyp", Array("isom".utf8) + [0, 0, 0, 0] + Array("isom".utf8))
        many += Array([[UInt8]](repeating: [0, 0, 0, 8] + Array("free".utf8), count: 100_000).joined())
        let counting = CountingSource(MemoryBytes(many))
        let info = MediaInspector.inspect(counting, name: [], modificationTimeNanoseconds: 0)
        #expect(info?.captureDate.source == .modificationTime)
        #expect(counting.reads <= 256)
        #expect(counting.bytes <= 4 << 20)
        // JPEG fill bytes forever.
        let fill = [0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 1 << 20)
        let jpeg = CountingSource(MemoryBytes(fill))
        _ = MediaInspector.inspect(jpeg, name: [], modificationTimeNanoseconds: 0)
        #expect(jpeg.reads <= 256)
    }

    @Test("every prefix and thousands of mutations of each sample: no crash")
    func mutations() {
        let samples: [[UInt8]] = [
            MediaFiles.photo("2023:07:14 09:30:00", offset: "+02:00"),
            MediaFiles.heic(exif: MediaFiles.exif(dateTimeOriginal: "2022:01:02 03:04:05")),
            MediaFiles.heic(exif: MediaFiles.exif(dateTimeOriginal: "2022:01:02 03:04:05"), inIdat: true),
            MediaFiles.movie(creation: 1_700_000_000, version: 1, moovFirst: true),
            MediaFiles.webp(exif: MediaFiles.exif(dateTimeOriginal: "2018:03:04 05:06:07")),
            MediaFiles.raw(dateTimeOriginal: "2021:05:06 07:08:09"),
        ]
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
        var inspected = 0
        for sample in samples {
            for length in 0...sample.count {
                _ = MediaInspector.inspect(bytes: Array(sample.prefix(length)))
                inspected += 1
            }
            for _ in 0..<1500 {
                var mutated = sample
                for _ in 0..<(1 + Int(next() % 4)) {
                    let at = Int(next() % UInt64(mutated.count))
                    mutated[at] = [0x00, 0xFF, 0x7F, 0x80, UInt8(truncatingIfNeeded: next())][Int(next() % 5)]
                }
                _ = MediaInspector.inspect(bytes: mutated)
                inspected += 1
            }
        }
        #expect(inspected > 9000)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// A byte source that counts what is asked of it.
final class CountingSource: ByteSource {
    let base: MemoryBytes
    var reads = 0
    var bytes = 0
    init(_ base: MemoryBytes) { self.base = base }
    var count: UInt64 { base.count }
    func bytes(at offset: UInt64, length: Int) -> [UInt8] {
        reads += 1
        let result = base.bytes(at: offset, length: length)
        bytes += result.count
        return result
    }
}
