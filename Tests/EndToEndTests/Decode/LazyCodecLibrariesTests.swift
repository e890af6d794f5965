import Foundation
import Testing
import TestSupport

/// The AVIF, HEIF and JPEG XL libraries (and the AV1, HEVC and Brotli stacks
/// behind them) are opened on the first image of their format
/// (Sources/CImageCodecs/lazy_codecs.h), so `cache prune` does not map them:
/// 4 MB of its peak memory over a million files. glibc's loader names every
/// object it opens under LD_DEBUG=files, into a file of its own with
/// LD_DEBUG_OUTPUT (stderr could be redirected by the process). Decoding
/// those formats through the binary is covered by WarmModernFormats and
/// DecodeVerifyCommand.
@Suite struct LazyCodecLibraries {
    @Test func pruneOpensNoModernCodecLibrary() throws {
        let dir = makeTempDirectory("imgwarm-lazy-codecs")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: dir + "/b46ca04023feeac3addabe8e574e2211.jpg"))
        let log = makeTempDirectory("imgwarm-lazy-codecs-log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let r = try BinaryRunner.run(["cache", "prune", "--cache", dir, "--max-age", "1d", "--max-size", "1M", "--dry-run"],
                                     environment: ["LD_DEBUG": "files", "LD_DEBUG_OUTPUT": log + "/ld"])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        // ld.<pid>: one file per process.
        let text = try FileManager.default.contentsOfDirectory(atPath: log)
            .map { try String(contentsOfFile: log + "/" + $0, encoding: .utf8) }.joined()
        let opened = text.split(separator: "\n").filter { $0.contains("file=") }
        // The loader's list is there: libcurl is linked as usual.
        #expect(opened.contains { $0.contains("libcurl") }, "no LD_DEBUG output in \(log)")
        for library in ["libavif", "libheif", "libjxl", "libaom", "libdav1d", "libde265", "libx265"] {
            #expect(!opened.contains { $0.contains(library) }, "cache prune opened \(library)")
        }
    }
}
