import Foundation
import Testing
import TestSupport

/// `--preset`: layout and folder name per app stack; explicit flags win.
@Suite struct CachePresetEndToEndTests {
    @Test(arguments: [("picasso", "picasso-cache", "journal"), ("coil1", "image_cache", "journal"),
                      ("react-native-fetch", "http-cache", "journal"), ("react-native-image", "image_cache", "v2.ols100.1")])
    func presetPicksLayoutAndFolder(_ preset: String, _ folder: String, _ marker: String) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        let manifest = f.writeManifest(urls)
        let xdg = f.dir + "/xdg"
        let run = try BinaryRunner.run(["warm", manifest, "--preset", preset, "--progress", "none"],
                                       environment: ["XDG_CACHE_HOME": xdg, "IMGWARM_CACHE": ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: xdg + "/" + folder + "/" + marker), "\(preset)")
        if marker == "journal" {
            let journal = try String(contentsOfFile: xdg + "/" + folder + "/journal", encoding: .utf8)
            #expect(journal.hasPrefix("libcore.io.DiskLruCache\n1\n201105\n2\n"))
        }
        // --cache and --layout given explicitly win.
        let explicit = try BinaryRunner.run(["warm", manifest, "--preset", preset, "--layout", "glide", "--cache", f.dir + "/other",
                                             "--progress", "none"], environment: ["XDG_CACHE_HOME": xdg])
        #expect(explicit.status == 0, "\(explicit.stderr)")
        let journal = try String(contentsOfFile: f.dir + "/other/journal", encoding: .utf8)
        #expect(journal.hasPrefix("libcore.io.DiskLruCache\n1\n1\n1\n"))
    }

    /// prune's default size is the preset's (Picasso's lower bound, 5 MB):
    /// a 6 MB folder is trimmed under --preset picasso and not under plain
    /// --layout okhttp --max-size 7MB.
    @Test func pruneUsesThePresetSizeLimit() throws {
        let f = try WarmFixture()
        var urls: [String] = []
        for i in 0..<3 {
            // About 2 MB a body (TinyPNG stores its pixels uncompressed).
            let bytes = TinyPNG.make(width: 1000, height: 700, seed: 900 + i)
            f.server.setFile("/big/\(i).png", bytes: bytes, contentType: "image/png")
            urls.append(f.server.url("/big/\(i).png"))
        }
        let run = try f.warm([f.writeManifest(urls), "--layout", "okhttp"])
        #expect(run.status == 0, "\(run.stderr)")
        let total = try FileManager.default.contentsOfDirectory(atPath: f.cache).filter { $0.hasSuffix(".1") }
            .reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: f.cache + "/" + $1)[.size] as? Int) ?? 0) }
        try #require(total > 5 * 1024 * 1024, "bodies of \(total) bytes are too small for this test")
        let keep = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--layout", "okhttp", "--max-size", "\(total + 10_000)", "--dry-run"])
        #expect(keep.stdout.contains("would remove 0 files"), "\(keep.stdout)")
        let picasso = try BinaryRunner.run(["cache", "prune", "--cache", f.cache, "--preset", "picasso", "--dry-run"])
        #expect(!picasso.stdout.contains("would remove 0 files") && picasso.status == 0, "\(picasso.stdout) \(picasso.stderr)")
    }
}
