// swift-tools-version:6.0
import PackageDescription

// How the two programs are linked: by lld, with relative relocations packed (DT_RELR); the
// functions a profile saw run laid out first, together (scripts/hot_functions.py makes the
// list); no symbols exported (nothing loads a program as a library, and its 6,500 public Swift
// names were 0.5 MB of tables the loader read at every start); every symbol bound at start, so
// the relocated tables are read-only afterwards (full RELRO); the C++ library the static Swift
// runtime needs taken from its archive (packaging/link/libstdc++.so says why).
let programLinking: [LinkerSetting] = [.unsafeFlags([
    "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/packaging/hot-functions.txt",
    "-Xlinker", "--no-warn-symbol-ordering",
    "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "now",
    "-L\(Context.packageDirectory)/packaging/link",
])]

let package = Package(
    name: "instant-upload",
    products: [
        .executable(name: "instant-upload", targets: ["instant-upload"]),
        .executable(name: "share-to", targets: ["share-to"]),
    ],
    targets: [
        // C libraries from Debian, wrapped once at the edge.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),

        // libcurl, loaded at the first request rather than at start: its header from
        // libcurl4-openssl-dev (the Makefile installs it), the library from libcurl4.
        .target(name: "CCurl", dependencies: ["CSystem"]),
        // libexif, loaded at the first EXIF date read: its headers from libexif-dev, the
        // library from libexif12.
        .target(name: "CExif", dependencies: ["CSystem"]),
        // Linux calls Glibc's module does not expose (SO_PEERCRED, accept4, netlink).
        .target(name: "CSystem"),
        // Syscalls, XDG paths, logging, names shown to people.
        .target(name: "Platform", dependencies: ["CSystem"]),
        // The durable queue: SQLite store, states, records. Knows nothing of HTTP.
        .target(name: "Queue", dependencies: ["CSQLite", "Platform"]),
        // HTTP, tus, WebDAV, hashing. Knows nothing of SQLite.
        .target(name: "Transport", dependencies: ["CCurl", "COpenSSL", "Platform"]),
        // Joins queue and transport: the agent's scheduler and transfers.
        .target(name: "Engine", dependencies: ["Queue", "Transport", "Platform", "CSystem"]),
        // Secrets, notifications, the folder picker.
        .target(name: "Desktop", dependencies: ["CDBus", "Platform"]),
        .target(name: "Connectivity", dependencies: ["CSystem", "Platform"]),
        // New photos and videos in watched folders: inotify, scans, media dates, rules, trash.
        // The agent's side of it (rules running, the memory of what was taken) feeds the queue through its intake.
        .target(name: "Watcher", dependencies: ["CExif", "CSystem", "Platform", "Queue", "Transport"]),
        // Commands shared by both executables.
        .target(name: "CLI", dependencies: ["Engine", "Queue", "Transport", "Desktop", "Connectivity", "Watcher", "Platform", "CSystem"]),

        // Linked by lld with packed relative relocations (DT_RELR, glibc 2.36): the programs'
        // 41,000 relocations take 8 kB instead of a 1 MB table that every process reads at start
        // and keeps resident. The functions a day's work runs are laid out first, together
        // (packaging/hot-functions.txt, made by scripts/hot_functions.py): the kernel keeps
        // code resident in 64 kB blocks around each page touched, 3 MB fewer of them so.
        .executableTarget(name: "instant-upload", dependencies: ["CLI", "Platform"], linkerSettings: programLinking),
        .executableTarget(name: "share-to", dependencies: ["CLI", "Platform"], linkerSettings: programLinking),
        // `make bench` helpers; not installed.
        .executableTarget(name: "Benchmarks", dependencies: ["Transport"]),

        // Helpers the tests share: temporary folders, the reference server, running programs.
        .target(name: "TestSupport", dependencies: ["Platform"], path: "Tests/TestSupport", exclude: ["secret-service.py", "holding-proxy.py"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform", "TestSupport"]),
        .testTarget(name: "QueueTests", dependencies: ["Queue", "CSQLite", "TestSupport"]),
        .testTarget(name: "TransportTests", dependencies: ["Transport", "TestSupport"]),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "CLI", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["CLI", "TestSupport"]),
        .testTarget(name: "DesktopTests", dependencies: ["Desktop", "TestSupport"], exclude: ["notification-recorder.py", "sni-watcher.py"]),
        .testTarget(name: "ConnectivityTests", dependencies: ["Connectivity", "TestSupport"]),
        .testTarget(name: "WatcherTests", dependencies: ["Watcher", "Queue", "TestSupport", "CSystem"]),
    ],
    swiftLanguageModes: [.v6]
)

// The programs' own Swift code gets a section per function in release builds, as the
// standard library already has, so that the order file above can lay out every function a
// day's work runs, not only the generic ones the compiler gave a section of their own. And
// every function keeps its name: LLVM's merging of identical functions leaves the originals
// as thunks without a symbol, which no order file can name, so each one the agent calls
// costs a 64 kB block of its own far from the others.
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(
        ["-Xfrontend", "-function-sections", "-Xfrontend", "-disable-llvm-merge-functions-pass"],
        .when(configuration: .release))]
}
