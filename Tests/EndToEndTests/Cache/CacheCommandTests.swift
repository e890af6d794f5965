import Foundation
import Testing
import TestSupport

@Suite struct CacheCommandTests {
    @Test func versionAndHelp() throws {
        let v = try BinaryRunner.run(["--version"])
        #expect(v.status == 0)
        #expect(v.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3)
        let h = try BinaryRunner.run(["help", "warm"])
        #expect(h.status == 0)
        #expect(h.stdout.contains("--concurrency"))
        #expect(h.stdout.contains("--max-failures"))
    }

    @Test func cachePathPrintsTheSDWebImageName() throws {
        let r = try BinaryRunner.run(["cache", "path", "https://example.com/images/photo.jpg", "--cache", "/tmp/c"])
        #expect(r.stdout == "/tmp/c/b46ca04023feeac3addabe8e574e2211.jpg\n")
        #expect(r.status == 1)  // it does not exist

        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The bare-MD5 fallback is found too, and all-exist exits 0.
        FileManager.default.createFile(atPath: dir + "/b46ca04023feeac3addabe8e574e2211", contents: Data([1]))
        let r2 = try BinaryRunner.run(["cache", "path", "https://example.com/images/photo.jpg"], environment: ["IMGWARM_CACHE": dir])
        #expect(r2.stdout == dir + "/b46ca04023feeac3addabe8e574e2211\n")
        #expect(r2.status == 0)
    }

    @Test func statsJSONCountsEntriesAndIgnoresHiddenFiles() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 1996)
        FileManager.default.createFile(atPath: dir + "/b46ca04023feeac3addabe8e574e2211.jpg", contents: Data(jpeg))
        FileManager.default.createFile(atPath: dir + "/aef7184dae84372263ed9aa2e8a91439", contents: Data("GIF89a....".utf8))
        FileManager.default.createFile(atPath: dir + "/.hidden", contents: Data(count: 9999))
        try FileManager.default.createDirectory(atPath: dir + "/.imgwarm/tmp", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: dir + "/.imgwarm/tmp/1-1.tmp", contents: Data(count: 9999))
        let r = try BinaryRunner.run(["cache", "stats", "--json", "--cache", dir])
        #expect(r.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(json["files"] as? Int == 2)
        #expect(json["bytes"] as? Int == 2010)
        #expect((json["allocated_bytes"] as? Int ?? 0) >= 2010)
        #expect(json["formats"] as? [String: Int] == ["jpeg": 1, "gif": 1])
        #expect(json["failed_urls"] as? Int == 0)
    }

    @Test func clearRemovesEntries() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: dir + "/aef7184dae84372263ed9aa2e8a91439", contents: Data([1]))
        let r = try BinaryRunner.run(["cache", "clear", "--cache", dir])
        #expect(r.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func usageErrorsExit2WithOneLine() throws {
        let bad = try BinaryRunner.run(["warm", "m.txt", "--max-bytes", "5X"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("5X"))
        let none = try BinaryRunner.run(["warm"])
        #expect(none.status == 2)
        let missing = try BinaryRunner.run(["warm", "/nonexistent/manifest.txt", "--cache", makeTempDirectory()])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/manifest.txt"))
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }

    @Test func unusableCacheExits3() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A file where the cache folder should be.
        FileManager.default.createFile(atPath: dir + "/file", contents: Data([1]))
        let manifest = dir + "/m.txt"
        FileManager.default.createFile(atPath: manifest, contents: Data("https://127.0.0.1:1/a.jpg\n".utf8))
        let r = try BinaryRunner.run(["warm", manifest, "--cache", dir + "/file/cache"])
        #expect(r.status == 3)
        #expect(r.stderr.contains(dir + "/file"))
    }

    /// `cache verify --delete` when descriptors run out (a low `ulimit -n`):
    /// a folder whose descriptor could not be duplicated is neither closed
    /// nor deleted in through the failed duplicate (-1). Each broken file
    /// is removed or named in a "cannot remove" line; "removed" is said
    /// only of files that are gone. Several limits, so that the duplicate
    /// fails at some folder whatever the descriptors the binary starts with.
    @Test(arguments: [16, 20, 24])
    func verifyDeleteWithFewDescriptorsClosesAndRemovesWhatItSays(_ limit: Int) throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/cache"
        try FileManager.default.createDirectory(atPath: cache + "/.imgwarm", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var files: [String] = []
        for folder in 1...30 {
            try FileManager.default.createDirectory(atPath: cache + "/d\(folder)", withIntermediateDirectories: false)
            for file in 1...5 {
                let path = cache + "/d\(folder)/f\(file).png"
                #expect(FileManager.default.createFile(atPath: path, contents: Data("not an image\n".utf8)))
                files.append(path)
            }
        }
        let run = try BinaryRunner.runTracingDescriptors(["cache", "verify", "--delete", "--force", "--cache", cache],
                                                         descriptorLimit: limit)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.badDescriptorCalls.isEmpty, "\(run.badDescriptorCalls)")
        // (stdout and stderr share one pipe here: a line of one may cut into a line of the other.)
        for path in files where FileManager.default.fileExists(atPath: path) {
            // Left: not listed (its folder was unreadable), or named as not removed.
            let listed = run.output.contains(path + ": not an image") || run.output.contains(path + ": cannot read")
            #expect(!listed || run.output.contains("cannot remove \(path): "), "\(path) said removed, still there: \(run.output)")
        }
    }

    /// A file `cache verify` cannot open or read is not known to be broken:
    /// it is listed as not checked and kept, even with `--delete` (an app
    /// with the right to read it may show it). The exit status says the
    /// cache was not vouched for.
    @Test func anUnreadableFileIsNotCheckedAndKept() throws {
        let dir = makeTempDirectory()
        defer {
            _ = chmod(dir + "/cache/locked.png", 0o644)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let cache = dir + "/cache"
        try FileManager.default.createDirectory(atPath: cache + "/.imgwarm", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: cache + "/good.png", contents: Data(TinyPNG.make(seed: 1))))
        #expect(FileManager.default.createFile(atPath: cache + "/empty.png", contents: Data()))
        #expect(FileManager.default.createFile(atPath: cache + "/locked.png", contents: Data(TinyPNG.make(seed: 2))))
        #expect(chmod(cache + "/locked.png", 0o000) == 0)
        let run = try runBoundByPermissions(["cache", "verify", "--delete", "--force", "--cache", cache],
                                            why: "a file the run may not read")
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains(cache + "/locked.png: not checked: unreadable, kept; cannot read: Permission denied"), "\(run.output)")
        #expect(run.output.contains("1 broken, 1 not checked (unreadable)"), "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: cache + "/locked.png"))
        #expect(FileManager.default.fileExists(atPath: cache + "/good.png"))
        #expect(!FileManager.default.fileExists(atPath: cache + "/empty.png"))
    }

    /// `cache verify` under a low `ulimit -n`: a batch holds no more files
    /// open than the limit leaves room for. Holding 256 at once, the run
    /// trapped (SIGILL) once libdispatch could not make its eventfd.
    @Test func verifyWithALowDescriptorLimitChecksEveryFile() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = dir + "/cache"
        try FileManager.default.createDirectory(atPath: cache + "/.imgwarm", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for i in 0..<300 {
            #expect(FileManager.default.createFile(atPath: cache + "/\(i).png", contents: Data(TinyPNG.make(seed: i))))
        }
        let run = try BinaryRunner.runTracingDescriptors(["cache", "verify", "--cache", cache], descriptorLimit: 64)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("checked 300 files: 0 broken"), "\(run.output)")
        #expect(run.badDescriptorCalls.isEmpty, "\(run.badDescriptorCalls)")
    }

    @Test func verifyHonoursStrictFormatsAndThePixelLimit() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A 4x3 TIFF (one IFD: width, length, one 12-byte strip), a format
        // checked from its header only: accepted by default.
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 4, 0]
        tiff += [0x00, 0x01, 3, 0, 1, 0, 0, 0, 4, 0, 0, 0]   // ImageWidth 4
        tiff += [0x01, 0x01, 3, 0, 1, 0, 0, 0, 3, 0, 0, 0]   // ImageLength 3
        tiff += [0x11, 0x01, 4, 0, 1, 0, 0, 0, 62, 0, 0, 0]  // StripOffsets
        tiff += [0x17, 0x01, 4, 0, 1, 0, 0, 0, 12, 0, 0, 0]  // StripByteCounts
        tiff += [0, 0, 0, 0] + [UInt8](repeating: 0, count: 12)
        FileManager.default.createFile(atPath: dir + "/aef7184dae84372263ed9aa2e8a91439", contents: Data(tiff))
        let lenient = try BinaryRunner.run(["cache", "verify", "--cache", dir])
        #expect(lenient.status == 0, "\(lenient.stdout)")
        let strict = try BinaryRunner.run(["cache", "verify", "--strict-formats", "--cache", dir])
        #expect(strict.status == 1)
        #expect(strict.stdout.contains("TIFF is not accepted"))
        let small = try BinaryRunner.run(["cache", "verify", "--max-pixels", "10", "--cache", dir])
        #expect(small.status == 1)
        #expect(small.stdout.contains("exceeds the pixel limit of 10"))
    }
}
