import CCurl
import Glibc

/// The connections every session of the process draws on, with their name lookups and TLS
/// sessions: a libcurl share handle.
///
/// A transfer has sessions of its own, and the agent runs one transfer per file, so
/// without this each file of a card's thousand photos opened a new connection (and over
/// TLS made a new handshake) to the server the last file had just used. Kept here, an
/// idle connection is taken by the next request to the same server with the same TLS
/// settings; libcurl uses one connection for one request at a time, and checks that a
/// kept connection is still open before it reuses it.
///
/// Credentials are not part of a connection: every request carries its own (Basic), so a
/// connection may serve two accounts of one server, as a browser's would.
enum SharedConnections {
    /// The share handle, made once; nil if libcurl could not make one (each session then
    /// keeps its own connection). Unsafe only in name: made once, then read, and libcurl
    /// guards what it holds with the locks below.
    nonisolated(unsafe) static let handle: UnsafeMutableRawPointer? = {
        guard ccurl_load() == nil, let share = ccurl_share_init() else { return nil }
        for data in [CURL_LOCK_DATA_CONNECT, CURL_LOCK_DATA_DNS, CURL_LOCK_DATA_SSL_SESSION] {
            guard ccurl_share_data(share, data) == CURLSHE_OK else {
                ccurl_share_cleanup(share)
                return nil
            }
        }
        ccurl_share_lock(share) { _, data, _, _ in
            pthread_mutex_lock(SharedConnections.mutex(data))
        }
        ccurl_share_unlock(share) { _, data, _ in
            pthread_mutex_unlock(SharedConnections.mutex(data))
        }
        return share
    }()

    /// One mutex for each kind of data libcurl shares; made once, then only locked.
    nonisolated(unsafe) private static let mutexes: UnsafeMutablePointer<pthread_mutex_t> = {
        let count = Int(CURL_LOCK_DATA_LAST.rawValue) + 1
        let mutexes = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: count)
        for i in 0..<count {
            (mutexes + i).initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutexes + i, nil)
        }
        return mutexes
    }()

    private static func mutex(_ data: curl_lock_data) -> UnsafeMutablePointer<pthread_mutex_t> {
        mutexes + Int(min(data.rawValue, CURL_LOCK_DATA_LAST.rawValue))
    }
}
