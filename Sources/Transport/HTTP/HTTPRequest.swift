import Glibc

public struct HTTPRequest {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: RequestBody
    public var sink: ResponseSink

    public init(method: String, url: String, headers: [(String, String)] = [], body: RequestBody = .none,
                sink: ResponseSink = .memory(limit: 1 << 20)) {
        self.method = method; self.url = url; self.headers = headers; self.body = body; self.sink = sink
    }
}
