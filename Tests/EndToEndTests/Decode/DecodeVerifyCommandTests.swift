import Foundation
import Testing
import TestSupport
import ImgWarmKit

/// `imgwarm cache verify` as a user runs it: output lines, JSON, exit codes.
@Suite struct DecodeVerifyCommand {
    /// The smallest valid GIF (1x1, one frame), written out by hand.
    static let tinyGIF: [UInt8] = Array("GIF89a".utf8) + [
        0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00,
        0x21, 0xF9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
        0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
    ]

    /// The binary's exit status and stdout.
    static func run(_ args: [String]) throws -> (status: Int32, out: String) {
        let r = try BinaryRunner.run(args)
        return (r.status, r.stdout)
    }

    @Test func reportsThenDeletesThenIsClean() throws {
        let dir = NSTemporaryDirectory() + "imgwarm-e2e-verify-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/.imgwarm/tmp", withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: dir) }
        _ = fm.createFile(atPath: dir + "/aaaa.gif", contents: Data(Self.tinyGIF))
        _ = fm.createFile(atPath: dir + "/bbbb.gif", contents: Data(Self.tinyGIF.dropLast(1)))
        _ = fm.createFile(atPath: dir + "/cccc", contents: Data("<html><body>Not Found</body></html>".utf8))
        _ = fm.createFile(atPath: dir + "/.hidden", contents: Data("x".utf8))
        _ = fm.createFile(atPath: dir + "/.imgwarm/tmp/4194305-1.tmp", contents: Data())

        let listed = try Self.run(["cache", "verify", "--cache", dir])
        #expect(listed.status == 1)
        #expect(listed.out == """
            \(dir)/bbbb.gif: truncated GIF: premature end of data after frame 1
            \(dir)/cccc: not an image (looks like HTML)
            \(dir)/.imgwarm/tmp/4194305-1.tmp: stray temp file
            checked 3 files: 2 broken, 1 stray temp file

            """)

        let json = try Self.run(["cache", "verify", "--cache", dir, "--json"])
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["checked"] as? Int == 3)
        #expect((object["broken"] as? [[String: String]])?.map { $0["path"] ?? "" } == [dir + "/bbbb.gif", dir + "/cccc"])
        #expect(object["stray_temp_files"] as? [String] == [dir + "/.imgwarm/tmp/4194305-1.tmp"])
        #expect(object["deleted"] as? Bool == false)

        let deleted = try Self.run(["cache", "verify", "--cache", dir, "--delete"])
        #expect(deleted.status == 1)
        #expect(deleted.out.hasSuffix("checked 3 files: 2 broken, 1 stray temp file, removed\n"))
        #expect(fm.fileExists(atPath: dir + "/aaaa.gif") && fm.fileExists(atPath: dir + "/.hidden"))
        #expect(!fm.fileExists(atPath: dir + "/bbbb.gif") && !fm.fileExists(atPath: dir + "/cccc"))

        let clean = try Self.run(["cache", "verify", "--cache", dir])
        #expect(clean.status == 0)
        #expect(clean.out == "checked 1 file: 0 broken, 0 stray temp files\n")
    }

    /// The path of an encoder the test needs (TestSupport's rule: skipped
    /// when missing, failed under CI).
    static func encoder(_ name: String) throws -> String {
        try neededTool(name, for: "making test images with \(name)")
    }

    /// Runs an encoder; the file it wrote, or a recorded failure.
    static func encode(_ tool: String, _ args: [String], output: String) -> Bool {
        guard let run = runTool(tool, args), run.status == 0, FileManager.default.fileExists(atPath: output) else {
            Issue.record("\(tool) \(args.joined(separator: " ")) failed: \(runTool(tool, args)?.output ?? "cannot start")")
            return false
        }
        return true
    }

    /// Files an app shows (SDWebImage's sniff, its AVIF coder,
    /// ImageIO behind SDImageIOCoder) are never deleted as broken; data of
    /// an unknown format is listed and kept unless --strict-formats.
    @Test func deleteKeepsEveryFormatAnAppShows() throws {
        let convert = try Self.encoder("convert"), avifenc = try Self.encoder("avifenc"),
            cjxl = try Self.encoder("cjxl"), heifEnc = try Self.encoder("heif-enc")
        let dir = NSTemporaryDirectory() + "imgwarm-e2e-formats-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: dir) }
        let work = dir + "/.work"
        try fm.createDirectory(atPath: work, withIntermediateDirectories: true)
        let src = work + "/src.png", src2 = work + "/src2.png"
        #expect(Self.encode(convert, ["-size", "64x48", "gradient:red-blue", src], output: src))
        #expect(Self.encode(convert, ["-size", "64x48", "gradient:green-white", src2], output: src2))
        let files: [(String, String, [String])] = [
            ("a1.avif", avifenc, ["-s", "10", src, dir + "/a1.avif"]),
            ("a2.avif", avifenc, ["-s", "10", src, src2, dir + "/a2.avif"]),  // avis: a sequence
            ("j1.jxl", cjxl, [src, dir + "/j1.jxl"]),                            // bare codestream
            ("j2.jxl", cjxl, [src, dir + "/j2.jxl", "--container=1"]),          // ISO-BMFF container
            ("h1.heic", heifEnc, [src, "-o", dir + "/h1.heic"]),
            ("i1.ico", convert, [src, dir + "/i1.ico"]),
            ("b1.bmp", convert, [src, dir + "/b1.bmp"]),
            ("b2.bmp", convert, [src, "BMP2:" + dir + "/b2.bmp"]),              // 12-byte core header
            ("t1.tif", convert, [src, dir + "/t1.tif"]),
            ("t2.tif", convert, [src, "-endian", "MSB", dir + "/t2.tif"]),
        ]
        for (name, tool, args) in files {
            #expect(Self.encode(tool, args, output: dir + "/" + name), "\(name)")
        }
        try fm.removeItem(atPath: work)
        _ = fm.createFile(atPath: dir + "/unknown", contents: Data([0x00, 0x01, 0x02, 0xFE, 0x10, 0x20]))
        _ = fm.createFile(atPath: dir + "/page", contents: Data("<html><body>Not Found</body></html>".utf8))

        // Names no layout gives: --force (a folder of anything, not a cache).
        let deleted = try Self.run(["cache", "verify", "--cache", dir, "--delete", "--force"])
        #expect(deleted.status == 1)
        #expect(deleted.out == """
            \(dir)/page: not an image (looks like HTML)
            \(dir)/unknown: unknown format (unknown signature 00 01 02 fe), kept
            checked \(files.count + 2) files: 1 broken, 1 of unknown format (kept), 0 stray temp files, removed

            """)
        for (name, _, _) in files { #expect(fm.fileExists(atPath: dir + "/" + name), "\(name) was deleted") }
        #expect(fm.fileExists(atPath: dir + "/unknown") && !fm.fileExists(atPath: dir + "/page"))

        let stats = try Self.run(["cache", "stats", "--cache", dir, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any])
        #expect(object["formats"] as? [String: Int] == ["avif": 2, "jxl": 2, "heic": 1, "ico": 1, "bmp": 2, "tiff": 2, "unknown": 1])

        let strict = try Self.run(["cache", "verify", "--cache", dir, "--delete", "--force", "--strict-formats", "--json"])
        #expect(strict.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(strict.out.utf8)) as? [String: Any])
        let gone = Set(((report["broken"] as? [[String: String]]) ?? []).compactMap { $0["path"] })
        // Formats decoded here stay; the others go under --strict-formats.
        let decoded: [String: ImageFormat] = ["avif": .avif, "jxl": .jxl, "heic": .heic, "ico": .ico, "bmp": .bmp, "tif": .tiff]
        let undecoded = files.map(\.0).filter { name in
            !(decoded[String(name.split(separator: ".").last!)]!.isDecodedHere)
        }
        #expect(gone == Set((undecoded + ["unknown"]).map { dir + "/" + $0 }))
        #expect(!fm.fileExists(atPath: dir + "/unknown"))
    }

    /// Debian's libjxl prints JXL_FAILURE traces to stderr for damaged data
    /// (djxl on the same file shows them): `cache verify` keeps them off
    /// imgwarm's stderr and still reports the file, on stdout, as broken.
    @Test func decoderLibraryOutputStaysOffStderr() throws {
        let convert = try Self.encoder("convert"), cjxl = try Self.encoder("cjxl"), djxl = try Self.encoder("djxl")
        let dir = NSTemporaryDirectory() + "imgwarm-e2e-libstderr-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/.work", withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: dir) }
        let src = dir + "/.work/src.png", good = dir + "/.work/good.jxl"
        #expect(Self.encode(convert, ["-size", "64x64", "gradient:red-blue", src], output: src))
        #expect(Self.encode(cjxl, [src, good, "-q", "90"], output: good))
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        var rng = SeededRandom(seed: 7)
        for _ in 0..<8 { bytes[bytes.count / 3 + Int(rng.next() % UInt64(bytes.count - bytes.count / 3))] ^= 0xFF }
        let damaged = dir + "/damaged.jxl"
        _ = fm.createFile(atPath: damaged, contents: Data(bytes))
        // The control: the library itself does print for this file.
        let control = try #require(runTool(djxl, [damaged, dir + "/.work/out.png"]))
        #expect(control.output.contains("JXL_FAILURE") || control.output.contains("lib/jxl"), "\(control.output)")

        let result = try BinaryRunner.run(["cache", "verify", "--cache", dir])
        #expect(result.status == 1)
        #expect(result.stderr == "")
        #expect(result.stdout.contains("\(damaged): corrupt JPEG XL"))
    }
}
