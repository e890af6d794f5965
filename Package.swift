// swift-tools-version:6.0
import PackageDescription

// Swift 6 language mode (strict concurrency checking, `swiftLanguageModes`
// below). The engine crosses threads through libcurl callbacks and Dispatch:
// the classes that do so are `@unchecked Sendable`, each with a one-line
// reason (a lock, or one owning thread) above its declaration.
let swiftSettings: [SwiftSetting] = []

let package = Package(
    name: "imgwarm",
    // Linux only, so no Apple platform is declared: the code calls Glibc
    // (getdents64 and statx through CFileScan, O_TMPFILE, renameat2,
    // mallopt) and links Debian's image libraries through pkg-config.
    // Sources/ImgWarmSupport/Platform.swift stops other builds with
    // one clear error.
    products: [
        .executable(name: "imgwarm", targets: ["imgwarm"]),
        .library(name: "ImgWarmKit", targets: ["ImgWarmKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // libcurl, through pkg-config; variadic setopt/getinfo wrapped in C.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libdeflate, through pkg-config: PNG/APNG image data is inflated
        // with it in one call first, zlib deciding whenever it does not
        // succeed (png_validate.c).
        .systemLibrary(
            name: "CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        // Our own C shim over libpng, libjpeg-turbo, giflib and libwebp
        // (with its demuxer, for animations): every setjmp/longjmp stays
        // inside C, Swift only sees return codes.
        .target(
            name: "CImageCodecs",
            dependencies: ["CDeflate"],
            linkerSettings: [
                .linkedLibrary("png16"),
                .linkedLibrary("jpeg"),
                .linkedLibrary("gif"),
                .linkedLibrary("webp"),
                .linkedLibrary("webpdemux"),
                .linkedLibrary("z"),
                // libtiff, linked the usual way, not opened on first use as
                // the three below: it decodes only the TIFFs whose header
                // cannot be judged alone (tiff_validate.c), and of the shared
                // objects behind it only libtiff, libjbig, libLerc and
                // liblzma are not mapped already for libcurl (zstd),
                // libjpeg, libwebp and libdeflate: 4 objects, not 30.
                .linkedLibrary("tiff"),
                // AVIF (libavif; libaom decodes AV1, see avif_validate.c),
                // HEIC/HEIF (libheif) and JPEG XL (libjxl) are not linked:
                // they are opened on first use (lazy_codecs.h), so that the
                // commands that decode none of them do not load the 30
                // shared objects behind them. Their headers are still needed.
                .linkedLibrary("dl"),
            ]
        ),
        // getdents64 and statx (birth times) for the cache walk of `cache
        // prune`; Swift's Glibc module does not import them.
        .target(name: "CFileScan"),
        // The engine, one target per layer; a target may import only the
        // ones named in its dependencies (docs/architecture.md, "Layers").
        .target(
            name: "ImgWarmSupport",
            dependencies: [
                "CCurl",
                "CFileScan",
                .product(name: "Collections", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImgWarmDecode",
            dependencies: [
                "ImgWarmSupport",
                "CImageCodecs",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImgWarmDownload",
            dependencies: [
                "ImgWarmSupport",
                "CCurl",
                .product(name: "Collections", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImgWarmCache",
            dependencies: [
                "ImgWarmSupport",
                "CFileScan",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the state writes of StateStore.apply.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImgWarmInspect",
            dependencies: [
                "ImgWarmSupport",
                "ImgWarmDecode",
                "ImgWarmCache",
                "CFileScan",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImgWarmReport",
            dependencies: [
                "ImgWarmSupport",
                "CFileScan",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ImgWarmWarm",
            dependencies: [
                "ImgWarmSupport",
                "ImgWarmDecode",
                "ImgWarmDownload",
                "ImgWarmCache",
                "ImgWarmInspect",
                "ImgWarmReport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The targets above under one name (the CLI, the benchmarks, the
        // end-to-end tests); each may import only those below it.
        .target(
            name: "ImgWarmKit",
            dependencies: ["ImgWarmSupport", "ImgWarmDecode", "ImgWarmDownload", "ImgWarmCache", "ImgWarmInspect", "ImgWarmReport", "ImgWarmWarm"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "imgwarm",
            dependencies: [
                "ImgWarmKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // `bench/bench-validate.sh`: validation throughput on image files.
        // Tiny, so building it costs the default build next to nothing.
        .executableTarget(
            name: "validate-bench",
            dependencies: ["ImgWarmKit"],
            path: "Sources/validate-bench",
            swiftSettings: swiftSettings
        ),
        // Test-only encoders (libpng, libjpeg-turbo, giflib, libwebp): the
        // decode tests make their images instead of committing binaries.
        .target(
            name: "CImageFixtures",
            path: "Tests/CImageFixtures",
            linkerSettings: [
                .linkedLibrary("png16"),
                .linkedLibrary("jpeg"),
                .linkedLibrary("gif"),
                .linkedLibrary("webp"),
                .linkedLibrary("webpmux"),
                // libavif + aom, libheif + x265, libjxl: modern_fixtures.c.
                .linkedLibrary("avif"),
                .linkedLibrary("heif"),
                .linkedLibrary("jxl"),
                // zlib: the compressed text chunks of large_fixtures.c.
                .linkedLibrary("z"),
            ]
        ),
        // giflib's own DGifGetLine decoding of GIF frames: the reference the
        // GIF tests compare iw_validate_gif's LZW check with (test-only).
        .target(
            name: "CGifReference",
            dependencies: ["CImageCodecs"],
            path: "Tests/CGifReference",
            linkerSettings: [.linkedLibrary("gif")]
        ),
        // A loopback HTTP server that misbehaves on request, for tests.
        .target(
            name: "TestSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImgWarmKitTests",
            dependencies: ["ImgWarmKit", "ImgWarmSupport", "ImgWarmDecode", "ImgWarmDownload", "ImgWarmCache", "ImgWarmInspect", "ImgWarmReport", "ImgWarmWarm", "CImageCodecs", "CFileScan", "TestSupport", "CImageFixtures", "CGifReference",
                           .product(name: "Crypto", package: "swift-crypto"),
                           // flutter_cache_manager's database written as the library leaves it.
                           .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["ImgWarmKit", "ImgWarmSupport", "ImgWarmDecode", "ImgWarmDownload", "ImgWarmCache", "ImgWarmInspect", "ImgWarmReport", "ImgWarmWarm", "TestSupport", "CImageFixtures", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The adversarial suite (kills, concurrent runs, disk full,
        // network faults at scale, bad manifests, TLS) against the binary.
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["ImgWarmKit", "ImgWarmSupport", "ImgWarmDecode", "ImgWarmDownload", "ImgWarmCache", "ImgWarmInspect", "ImgWarmReport", "ImgWarmWarm", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
