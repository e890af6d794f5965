import Foundation
import Testing
import TestSupport

/// Every command detects the layout of an existing folder when none is
/// named: from the layout `.imgwarm/layout` records (a fresh folder the
/// first warm wrote), else from the index or the names of the files (a
/// long-used folder of the library's own, no `.imgwarm`). `cache path`
/// shows which: it prints the name the detected layout gives an entry.
@Suite(.serialized) struct LayoutDetectionTests {
    static let layouts = ["sdwebimage", "kingfisher", "nuke", "glide", "coil", "coil2", "flutter"]

    @Test(arguments: layouts) func detectedFromAFreshAndFromALongUsedFolder(_ layout: String) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        #expect(try f.warm([f.writeManifest(urls), "--layout", layout]).status == 0)
        let record = try String(contentsOfFile: f.cache + "/.imgwarm/layout", encoding: .utf8)
        #expect(record == layout + "\n")
        let named = try BinaryRunner.run(["cache", "path", "--cache", f.cache, "--layout", layout, urls[0]])
        #expect(named.status == 0, "\(named.stderr)")
        let fresh = try BinaryRunner.run(["cache", "path", "--cache", f.cache, urls[0]])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout == named.stdout)
        // Long used: the library's files only.
        try FileManager.default.removeItem(atPath: f.cache + "/.imgwarm")
        let used = try BinaryRunner.run(["cache", "path", "--cache", f.cache, urls[0]])
        #expect(used.status == 0, "\(used.stderr)")
        #expect(used.stdout == named.stdout)
        // Every command goes by it: stats counts the entries, verify finds
        // them sound (never the index files as images), and warm into it
        // again without --layout stores nothing new in another format.
        let stats = try BinaryRunner.run(["cache", "stats", "--cache", f.cache, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        #expect(object["files"] as? Int == 2, "\(stats.stdout)")
        let verify = try BinaryRunner.run(["cache", "verify", "--cache", f.cache, "--delete"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let again = try f.warm([f.writeManifest(urls)])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOfFile: f.cache + "/.imgwarm/layout", encoding: .utf8) == layout + "\n")
    }

    /// A named layout the folder contradicts is exit 3 naming what it
    /// holds, for warm (never two formats in one folder) and the others.
    @Test func aContradictingLayoutIsRefused() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(2)
        #expect(try f.warm([f.writeManifest(urls), "--layout", "kingfisher"]).status == 0)
        let before = f.cacheFiles()
        for args in [["warm", f.writeManifest(urls), "--progress", "none", "--layout", "glide"],
                     ["cache", "verify", "--delete", "--layout", "nuke"], ["cache", "clear", "--layout", "sdwebimage"]] {
            let r = try BinaryRunner.run(args + ["--cache", f.cache])
            #expect(r.status == 3, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("\(f.cache): holds a kingfisher cache (detected from the layout recorded in .imgwarm/layout)"),
                    "\(r.stderr)")
        }
        let viaEnvironment = try BinaryRunner.run(["cache", "clear", "--cache", f.cache], environment: ["IMGWARM_LAYOUT": "Nuke"])
        #expect(viaEnvironment.status == 3, "\(viaEnvironment.stderr)")
        #expect(f.cacheFiles() == before)
        // Any case is the same layout.
        let mixedCase = try BinaryRunner.run(["cache", "stats", "--cache", f.cache, "--layout", "KingFisher"])
        #expect(mixedCase.status == 0, "\(mixedCase.stderr)")
    }

    /// Two layouts that fit alike: exit 2 asking for --layout.
    @Test func aTieAsksForTheLayout() throws {
        let dir = makeTempDirectory("imgwarm-tie")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/image_cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let r = try BinaryRunner.run(["cache", "stats", "--cache", cache])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("\(cache): its folder name fits coil and coil2 and fresco alike; say which with --layout"), "\(r.stderr)")
        #expect(try BinaryRunner.run(["cache", "stats", "--cache", cache, "--layout", "coil2"]).status == 0)
    }

    @Test func aBadLayoutIsOneLineListingTheValues() throws {
        let r = try BinaryRunner.run(["cache", "stats", "--layout", "picasso"])
        #expect(r.status == 2)
        let lines = r.stderr.split(separator: "\n").filter { !$0.isEmpty && !$0.hasPrefix("Usage") && !$0.contains("--help") }
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(r.stderr.contains("'picasso' is not a layout (sdwebimage, kingfisher, nuke, glide, coil, coil2, flutter, okhttp, fresco)"), "\(r.stderr)")
    }

    /// A file named as a layout's index is never judged as an image, so
    /// `verify --delete` never removes it, whichever layout is verified.
    @Test func indexFilesAreNeverJudgedAsImages() throws {
        let f = try WarmFixture()
        #expect(try f.warm([f.writeManifest(f.servePNGs(1))]).status == 0)
        for name in ["journal", "journal.bkp", "libCachedImageData.db"] {
            FileManager.default.createFile(atPath: f.cache + "/" + name, contents: Data("not a header\n".utf8))
        }
        let r = try BinaryRunner.run(["cache", "verify", "--delete", "--force", "--cache", f.cache])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("checked 1 file: 0 broken"), "\(r.stdout)")
        for name in ["journal", "journal.bkp", "libCachedImageData.db"] {
            #expect(FileManager.default.fileExists(atPath: f.cache + "/" + name))
        }
    }
}
