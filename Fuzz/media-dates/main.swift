// Pictures and videos by content, with their capture dates (JPEG and WebP EXIF through
// libexif, the HEIF Exif item in ISO-BMFF boxes, the MP4/QuickTime movie header): any bytes
// give a kind and a plausible date, or nil, and say whether the file is cut short; never a
// crash, never unbounded work.
import Foundation
import Platform
@testable import Watcher

let names: [[UInt8]] = ["IMG_0001.jpg", "clip.mp4", "photo.heic", "RAW_0001.dng", "noname"].map { Array($0.utf8) }
let mtime: Int64 = 1_700_000_000_123_456_789

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    // The name decides only for formats without a signature of their own (camera RAW).
    let name = names[Int(bytes.first ?? 0) % names.count]
    guard let info = MediaInspector.inspect(bytes: bytes, name: name, modificationTimeNanoseconds: mtime) else { return 0 }
    // Whether it is cut short: any answer, bounded work.
    _ = MediaCompleteness.cutShort(info.format, in: MemoryBytes(bytes))
    let date = info.captureDate
    switch date.moment {
    case .wallClock(let fields, let offset):
        precondition(date.source == .exif && fields.isPlausible, "an EXIF date out of the calendar: \(fields)")
        if let offset { precondition(abs(offset) <= 24 * 3600, "an EXIF offset beyond a day: \(offset)") }
    case .instant:
        precondition(date.source != .exif)
        if date.source == .modificationTime { precondition(date == .modificationTime(nanoseconds: mtime, reason: date.fallbackReason)) }
    }
    let fields = date.calendarFields(in: TimeZone(identifier: "UTC")!)
    precondition((1...12).contains(fields.month) && (1...31).contains(fields.day), "a day that is not one: \(fields)")
    let rule = WatchRule(id: "fuzz", folder: LocalPath("/c"), remoteFolder: "/Photos", subfolders: .day)
    let remote = RemotePathPlanner.remotePath(for: LocalPath("/c/IMG.jpg"), capturedAt: date, rule: rule, timeZone: TimeZone(identifier: "UTC")!)
    precondition(remote.hasPrefix("/Photos/") && !remote.contains("/../"), "a remote path out of the rule's folder: \(remote)")
    return 0
}
