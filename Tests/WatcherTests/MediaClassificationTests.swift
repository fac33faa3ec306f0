import Testing
import TestSupport
@testable import Watcher

@Suite("Pictures and videos told by content")
struct MediaClassificationTests {
    static let stamp = "2023:07:14 09:30:00"

    static let samples: [([UInt8], MediaFormat)] = {
        var list: [([UInt8], MediaFormat)] = []
        list.append((MediaFiles.photo(stamp), .jpeg))
        list.append((MediaFiles.heic(exif: MediaFiles.exif(dateTimeOriginal: stamp)), .heif))
        list.append((MediaFiles.png, .png))
        list.append((MediaFiles.gif, .gif))
        list.append((MediaFiles.webp(exif: MediaFiles.exif(dateTimeOriginal: stamp)), .webp))
        list.append((MediaFiles.raw(dateTimeOriginal: stamp), .tiffRaw))
        list.append((Array("FUJIFILMCCD-RAW 0201FF383501".utf8) + [UInt8](repeating: 0, count: 64), .raf))
        list.append((MediaFiles.box("ftyp", Array("crx ".utf8) + [0, 0, 0, 1] + Array("crx isom".utf8)), .cr3))
        list.append((Array("IIRO".utf8) + [8, 0, 0, 0] + [UInt8](repeating: 0, count: 32), .tiffRaw))
        list.append(([0x49, 0x49, 0x55, 0x00, 0x18, 0, 0, 0] + [UInt8](repeating: 0, count: 32), .tiffRaw))
        list.append((MediaFiles.movie(creation: 1_700_000_000), .mp4))
        list.append((MediaFiles.movie(creation: 1_700_000_000, quickTime: true), .quickTime))
        list.append((MediaFiles.box("ftyp", Array("3gp4".utf8) + [0, 0, 0, 0] + Array("3gp4isom".utf8)), .threeGPP))
        list.append((MediaFiles.box("ftyp", Array("M4V ".utf8) + [0, 0, 0, 1] + Array("M4V mp42isom".utf8)), .mp4))
        list.append((MediaFiles.box("moov", []) + MediaFiles.box("mdat", [1, 2, 3]), .quickTime))
        list.append((MediaFiles.matroska(docType: "matroska"), .matroska))
        list.append((MediaFiles.matroska(docType: "webm"), .webm))
        list.append((MediaFiles.avi, .avi))
        // An MPEG-2 pack header and padding: a camcorder's .MOD, an old camera's .MPG.
        list.append(([0x00, 0x00, 0x01, 0xBA, 0x44, 0x00, 0x04, 0x00, 0x04, 0x01, 0x01, 0x89, 0xC3, 0xF8] + [UInt8](repeating: 0xFF, count: 32), .mpegPS))
        list.append(([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C] + [UInt8](repeating: 0, count: 32), .asf))
        list.append((Array("BM".utf8) + [0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0] + [UInt8](repeating: 0, count: 40), .bmp))
        list.append(([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A] + [UInt8](repeating: 0, count: 32), .jpegXL))
        list.append(([0xFF, 0x0A, 0xFA, 0x7F] + [UInt8](repeating: 0, count: 32), .jpegXL))
        return list
    }()

    @Test("each format is recognised by its first bytes, whatever it is called", arguments: samples)
    func byContent(bytes: [UInt8], format: MediaFormat) {
        #expect(MediaClassifier.classify(header: bytes, name: Array("file.bin".utf8)) == format)
        #expect(MediaInspector.inspect(bytes: bytes, name: Array("file.bin".utf8))?.format == format)
    }

    @Test("a file named like a picture but holding something else is not a picture")
    func nameAlone() {
        #expect(MediaInspector.inspect(bytes: Array("hello, world\n".utf8), name: Array("IMG_0001.jpg".utf8)) == nil)
        #expect(MediaInspector.inspect(bytes: MediaFiles.photo(Self.stamp), name: Array("notes.txt".utf8))?.kind == .picture)
        #expect(MediaInspector.inspect(bytes: [], name: Array("empty.mp4".utf8)) == nil)
        #expect(MediaInspector.inspect(bytes: Array("BM is also how a note may begin\n".utf8), name: Array("x.bmp".utf8)) == nil)
    }

    @Test("RAW formats without a signature of their own go by name")
    func rawByName() {
        #expect(MediaInspector.inspect(bytes: Array("FOVb".utf8) + [0, 0, 0, 0], name: Array("DSC_1.X3F".utf8))?.format == .rawByName)
        #expect(MediaInspector.inspect(bytes: Array("FOVb".utf8) + [0, 0, 0, 0], name: Array("DSC_1.dat".utf8)) == nil)
    }

    @Test("an audio-only Matroska file is not a video")
    func audioMatroska() {
        #expect(MediaInspector.inspect(bytes: MediaFiles.matroska(docType: "matroska"), name: Array("song.mka".utf8)) == nil)
    }

    @Test("pictures and videos: neither flag means both")
    func selection() {
        #expect(MediaSelection(pictures: false, videos: false) == .all)
        #expect(MediaSelection(pictures: true, videos: false).includes(.video) == false)
        #expect(MediaSelection(pictures: false, videos: true).includes(.picture) == false)
        #expect(MediaSelection(pictures: false, videos: true).includes(.video))
    }
}
