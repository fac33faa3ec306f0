/// Which kinds a rule takes. Neither flag set means both.
public struct MediaSelection: Sendable, Equatable, Codable {
    public private(set) var pictures: Bool
    public private(set) var videos: Bool

    public init(pictures: Bool, videos: Bool) {
        // "Neither" is how a person says "no filter".
        self.pictures = pictures || !videos
        self.videos = videos || !pictures
    }

    public static let all = MediaSelection(pictures: true, videos: true)

    public func includes(_ kind: MediaKind) -> Bool {
        switch kind {
        case .picture: pictures
        case .video: videos
        }
    }
}
