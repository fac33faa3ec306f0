/// A MIME type from a file name's extension, for the `filetype` upload metadata.
enum MediaType {
    static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "heic": "image/heic",
        "heif": "image/heif", "webp": "image/webp", "tif": "image/tiff", "tiff": "image/tiff", "dng": "image/x-adobe-dng",
        "cr2": "image/x-canon-cr2", "nef": "image/x-nikon-nef", "arw": "image/x-sony-arw", "raf": "image/x-fuji-raf",
        "mp4": "video/mp4", "mov": "video/quicktime", "m4v": "video/x-m4v", "mkv": "video/x-matroska", "avi": "video/x-msvideo",
        "3gp": "video/3gpp", "webm": "video/webm", "mts": "video/mp2t", "pdf": "application/pdf", "txt": "text/plain",
        "zip": "application/zip",
    ]

    static func guess(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    static func isPicture(_ name: String) -> Bool { guess(name).hasPrefix("image/") }
    static func isVideo(_ name: String) -> Bool { guess(name).hasPrefix("video/") }
}
