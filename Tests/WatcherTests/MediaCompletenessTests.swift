import Testing
import TestSupport
@testable import Watcher

/// A picture or video cut short (a copy interrupted and left under its name) is told from a
/// whole one by its own structure; formats without a cheap way to tell are taken as they are.
@Suite("Pictures and videos cut short")
struct MediaCompletenessTests {
    static let photo = MediaFiles.photo("2024:03:15 10:00:00")
    static let movie = MediaFiles.movie(creation: 1_700_000_000, mediaBytes: 4096)
    static let heic = MediaFiles.heic(exif: MediaFiles.exif(dateTimeOriginal: "2024:03:15 10:00:00"))
    static let webp = MediaFiles.webp(exif: MediaFiles.exif(dateTimeOriginal: "2024:03:15 10:00:00"))

    func cutShort(_ format: MediaFormat, _ bytes: [UInt8]) -> String? {
        MediaCompleteness.cutShort(format, in: MemoryBytes(bytes))
    }

    @Test("whole files are whole, and so is a JPEG with data after its end (a motion photo's video, a maker's trailer)")
    func whole() {
        #expect(cutShort(.jpeg, Self.photo) == nil)
        #expect(cutShort(.jpeg, Self.photo + TestData.bytes(count: 70_000, seed: 3)) == nil)
        #expect(cutShort(.png, MediaFiles.png) == nil)
        #expect(cutShort(.png, MediaFiles.png + [0, 0, 0]) == nil, "a few bytes after IEND")
        #expect(cutShort(.mp4, Self.movie) == nil)
        #expect(cutShort(.quickTime, MediaFiles.movie(creation: 1_700_000_000, quickTime: true, moovFirst: true)) == nil)
        #expect(cutShort(.heif, Self.heic) == nil)
        #expect(cutShort(.heif, MediaFiles.heic(exif: MediaFiles.exif(dateTimeOriginal: "2024:03:15 10:00:00"), inIdat: true)) == nil,
                "its data in the meta box")
        #expect(cutShort(.webp, Self.webp) == nil)
        #expect(cutShort(.avi, MediaFiles.avi) == nil)
    }

    @Test("cut anywhere, each is cut short, and says where", arguments: [MediaFormat.jpeg, .png, .mp4, .heif, .webp])
    func cutAnywhere(_ format: MediaFormat) {
        let whole: [UInt8] = switch format {
        case .jpeg: Self.photo
        case .png: MediaFiles.png
        case .mp4: Self.movie
        case .heif: Self.heic
        default: Self.webp
        }
        // Past the signature (shorter is not classified as this format at all).
        // A RIFF file may lack its last pad byte; one eight bytes short may be a writer that
        // counted the header in.
        let last = whole.count - (format == .webp ? 9 : 1)
        var missed: [Int] = []
        for length in 12...last where cutShort(format, Array(whole.prefix(length))) == nil { missed.append(length) }
        #expect(missed.isEmpty, "taken as whole when cut to \(missed.prefix(10)) of \(whole.count) bytes")
        #expect(cutShort(format, Array(whole.prefix(last)))?.contains("a copy interrupted?") == true)
    }

    /// A motion photo as Google's camera writes it: the picture, with XMP saying it carries
    /// a video, the video appended, and (as Samsung's do) a maker's trailer after that.
    static func motionPhoto(between: [UInt8] = [], trailer: [UInt8] = [],
                            xmp: String = "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><rdf:RDF><rdf:Description GCamera:MotionPhoto=\"1\"/></rdf:RDF></x:xmpmeta>") -> [UInt8] {
        let app1 = [0xFF, 0xE1] + withUnsafeBytes(of: UInt16(xmp.utf8.count + 2).bigEndian) { Array($0) } + Array(xmp.utf8)
        return Array(photo.prefix(2)) + app1 + Array(photo.dropFirst(2)) + between + movie + trailer
    }

    @Test("a motion photo's video is found after a gain map or a maker's marker, across the blocks it is looked for in, and the XMP is read in its other forms")
    func motionPhotoShapes() {
        let gainMap = Self.photo + Array("MotionPhoto_Data".utf8)
        #expect(cutShort(.jpeg, Self.motionPhoto(between: gainMap)) == nil)
        #expect(cutShort(.jpeg, Array(Self.motionPhoto(between: gainMap).dropLast(10))) != nil)
        // "ftyp" lies across the end of the first block looked at, or just inside or after it.
        for shift in -6...6 {
            let filler = [UInt8](repeating: 0x11, count: MediaCompleteness.scanBlock - 8 + shift)
            let whole = Self.motionPhoto(between: filler)
            #expect(cutShort(.jpeg, whole) == nil, "shift \(shift)")
            #expect(cutShort(.jpeg, Array(whole.dropLast(10))) != nil, "shift \(shift)")
        }
        for xmp in ["http://ns.adobe.com/xap/1.0/\0<rdf:Description><Camera:MotionPhoto>1</Camera:MotionPhoto></rdf:Description>",
                    "http://ns.adobe.com/xap/1.0/\0<rdf:Description GCamera:MicroVideo='1' GCamera:MicroVideoOffset='4000'/>",
                    "http://ns.adobe.com/xap/1.0/\0<Container:Item Item:Mime=\"video/mp4\" Item:Semantic=\"MotionPhoto\" Item:Length=\"4000\"/>",
                    "http://ns.adobe.com/xmp/extension/\0" + String(repeating: "0", count: 40) + "<rdf:Description GCamera:MotionPhoto=\"1\"/>"] {
            #expect(cutShort(.jpeg, Array(Self.motionPhoto(xmp: xmp).dropLast(10))) != nil, "\(xmp)")
        }
        let no = "http://ns.adobe.com/xap/1.0/\0<rdf:Description GCamera:MotionPhoto=\"0\" GCamera:MotionPhotoVersion=\"1\"/>"
        #expect(cutShort(.jpeg, Array(Self.motionPhoto(xmp: no).dropLast(10))) == nil, "not a motion photo: its trailer is any trailer")
    }

    @Test("a motion photo is whole with its whole video, and cut short anywhere in the video")
    func motionPhoto() {
        let whole = Self.motionPhoto()
        #expect(cutShort(.jpeg, whole) == nil)
        #expect(cutShort(.jpeg, Self.motionPhoto(trailer: Array("MotionPhoto_Data".utf8) + TestData.bytes(count: 300, seed: 4))) == nil)
        let picture = whole.count - Self.movie.count
        var missed: [Int] = []
        // Cut exactly at the picture's end, it is a whole JPEG: nothing tells it from one without a video.
        for length in picture + 1..<whole.count where cutShort(.jpeg, Array(whole.prefix(length))) == nil { missed.append(length) }
        #expect(missed.isEmpty, "taken as whole when cut to \(missed.prefix(10)) of \(whole.count) bytes")
        #expect(cutShort(.jpeg, Array(whole.prefix(picture + 100)))?.contains("a copy interrupted?") == true)
        #expect(cutShort(.jpeg, Array(whole.prefix(picture + 3))) == "it ends before the motion photo's video (a copy interrupted?)")
        #expect(cutShort(.jpeg, Self.photo + Self.movie.prefix(100)) == nil, "without the XMP, a trailer like any other")
    }

    @Test("a video whose media box runs past the end names it; one cut between two boxes names the one it lacks")
    func namesTheBox() throws {
        let movie = MediaFiles.movie(creation: 1_700_000_000, moovFirst: true, mediaBytes: 4096)
        let why = try #require(cutShort(.mp4, Array(movie.prefix(movie.count - 1000))))
        #expect(why.contains("'mdat' box ends 1000 bytes past the file's end"), "\(why)")
        let noMovie = try #require(cutShort(.mp4, Array(Self.movie.prefix(Self.movie.count - 4096 / 2))))
        #expect(noMovie.contains("'mdat' box ends"), "\(noMovie)")
        let beforeMoov = Array(Self.movie.prefix(Self.movie.count - (Self.movie.count - 32 - 4104)))
        #expect(cutShort(.mp4, beforeMoov) == "it lacks the boxes its format needs (a copy interrupted?)")
    }

    @Test("a whole video with a maker's trailer, an image sequence, and a RIFF length that counts its header: whole; a fragment cut short is not")
    func realWorldShapes() {
        #expect(cutShort(.mp4, Self.movie + Array("SEFH".utf8) + TestData.bytes(count: 300, seed: 5)) == nil, "a trailer after the boxes")
        #expect(cutShort(.mp4, Self.movie + [0, 0, 0]) == nil, "a few bytes of padding")
        let sequence = MediaFiles.box("ftyp", Array("msf1".utf8) + [0, 0, 0, 0] + Array("msf1hevc".utf8))
            + MediaFiles.box("moov", []) + MediaFiles.box("mdat", TestData.bytes(count: 500, seed: 6))
        #expect(cutShort(.heif, sequence) == nil, "an image sequence has a movie, not items")
        let fragments = Self.movie + MediaFiles.box("moof", [1, 2, 3]) + MediaFiles.box("mdat", TestData.bytes(count: 900, seed: 7))
        #expect(cutShort(.mp4, fragments) == nil)
        #expect(cutShort(.mp4, Array(fragments.dropLast(100)))?.contains("'mdat' box ends 100 bytes past") == true)
        var riff = Self.webp
        riff.replaceSubrange(4..<8, with: withUnsafeBytes(of: UInt32(riff.count).littleEndian) { Array($0) })
        #expect(cutShort(.webp, riff) == nil, "declared length counts the header")
        #expect(cutShort(.webp, Array(Self.webp.dropLast())) == nil, "the last pad byte left out")
        #expect(cutShort(.webp, Array(Self.webp.dropLast(2))) != nil, "any more is a cut")
    }

    @Test("damage that is not a cut is not this check's to judge: taken as it is")
    func damageIsNotACut() {
        // A box of size 0 runs to the end; a size below its header, or one that overflows, is damage.
        let start = MediaFiles.box("ftyp", Array("isom".utf8)) + MediaFiles.box("moov", [])
        #expect(cutShort(.mp4, start + [0, 0, 0, 0] + Array("mdat".utf8) + [1, 2, 3]) == nil)
        #expect(cutShort(.mp4, start + [0, 0, 0, 4] + Array("mdat".utf8) + [1, 2, 3]) == nil)
        #expect(cutShort(.mp4, start + [0, 0, 0, 1] + Array("mdat".utf8) + [UInt8](repeating: 0xFF, count: 8)) == nil)
        // A JPEG whose bytes after the start are not segments.
        #expect(cutShort(.jpeg, [0xFF, 0xD8, 0x12, 0x34, 0x56]) == nil)
        // Formats without a cheap way to tell.
        #expect(cutShort(.tiffRaw, Array(MediaFiles.raw(dateTimeOriginal: "2024:03:15 10:00:00").prefix(40))) == nil)
        #expect(cutShort(.gif, Array(MediaFiles.gif.prefix(20))) == nil)
    }
}
