import CSystem

/// How the long-running agent asks glibc's malloc to give memory back.
///
/// By default malloc raises its mmap threshold each time a large block is freed (up to
/// 32 MiB). After the first few transfers, their large buffers (a chunk being checksummed,
/// the hash stages) are then taken from the heap instead of mmap, and stay there when
/// freed: `make soak` saw an agent's resident memory climb from 50 to 110 MB in five minutes
/// with nothing leaked, and stay flat at about 35 MB with the threshold fixed. Setting it
/// once turns the raising off, so every large buffer is mapped and given back on free.
public enum MallocTuning {
    public static let mmapThreshold: Int32 = 128 * 1024

    public static func forLongRunningProcess() {
        _ = csystem_set_mmap_threshold(mmapThreshold)
    }

    /// Gives the memory freed in every arena back to the kernel. Many small blocks freed
    /// together (a long folder listing parsed, then let go) otherwise stay with the thread's
    /// arena that held them, and the agent's resident memory climbs with the longest listing
    /// each thread has seen. It walks the arenas: for after such work, not for every call.
    public static func giveBackFreed() {
        _ = csystem_malloc_trim()
    }
}
