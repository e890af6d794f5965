import Foundation
import Testing
import TestSupport
import ImgWarmKit

/// `warm` on every format an app shows, against a loopback server: none is
/// failed as a bad image; the report has each entry's format, size, frame
/// count and Content-Type; `-v` notes responses that vary on Accept.
@Suite struct WarmFormats {
    /// Encodes one 64x48 source with each CLI encoder into `dir`; nil after
    /// recording why an encoder failed. A missing encoder skips the test
    /// (fails it under CI).
    static func makeImages(_ dir: String) throws -> [String: [UInt8]]? {
        let convert = try DecodeVerifyCommand.encoder("convert"), avifenc = try DecodeVerifyCommand.encoder("avifenc"),
            cjxl = try DecodeVerifyCommand.encoder("cjxl"), img2webp = try DecodeVerifyCommand.encoder("img2webp")
        let src = dir + "/src.png", src2 = dir + "/src2.png"
        let steps: [(String, [String], String)] = [
            (convert, ["-size", "64x48", "gradient:red-blue", src], src),
            (convert, ["-size", "64x48", "gradient:green-white", src2], src2),
            (avifenc, ["-s", "10", src, dir + "/a.avif"], dir + "/a.avif"),
            (cjxl, [src, dir + "/a.jxl"], dir + "/a.jxl"),
            (img2webp, ["-loop", "0", "-lossy", src, src2, src, "-o", dir + "/anim.webp"], dir + "/anim.webp"),
            (convert, [src, dir + "/a.ico"], dir + "/a.ico"),
            (convert, [src, dir + "/a.tif"], dir + "/a.tif"),
        ]
        for (tool, args, output) in steps where !DecodeVerifyCommand.encode(tool, args, output: output) { return nil }
        var images: [String: [UInt8]] = [:]
        for name in ["a.avif", "a.jxl", "anim.webp", "a.ico", "a.tif"] {
            images[name] = FileManager.default.contents(atPath: dir + "/" + name).map { [UInt8]($0) }
        }
        return images
    }

    @Test func everyFormatIsCachedAndReported() throws {
        let f = try WarmFixture()
        let work = f.dir + "/images"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        guard let images = try Self.makeImages(work) else { return }
        let served: [(String, String, String?)] = [
            ("a.avif", "image/avif", "Accept"),
            ("a.jxl", "image/jxl", nil),
            ("anim.webp", "image/webp", "Accept-Encoding, Accept"),
            ("a.ico", "image/x-icon", nil),
            ("a.tif", "image/tiff", nil),
        ]
        for (name, type, vary) in served {
            f.server.setFile("/" + name, bytes: try #require(images[name]), contentType: type, vary: vary)
        }
        // Binary data of no known format: kept, reported as unknown.
        f.server.setFile("/blob", bytes: [0x00, 0x01, 0x02, 0xFE, 0x10, 0x20, 0x30], contentType: "application/octet-stream")
        let manifest = f.writeManifest(served.map { f.server.url("/" + $0.0) } + [f.server.url("/blob")])
        let report = f.dir + "/report.json"
        let r = try f.warm([manifest, "--report", report, "-v"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("downloaded \(f.server.url("/anim.webp")) (webp 64x48, 3 frames, image/webp, Vary: Accept)"), "\(r.stderr)")
        #expect(r.stderr.contains("downloaded \(f.server.url("/a.ico")) (ico 64x48, image/x-icon)\n"), "\(r.stderr)")
        #expect(r.stderr.contains("downloaded \(f.server.url("/a.avif")) (avif 64x48, image/avif, Vary: Accept)"), "\(r.stderr)")

        let entries = try f.report(report).entries
        func entry(_ path: String) -> [String: Any]? { entries.first { $0["url"] as? String == f.server.url(path) } }
        // A JPEG XL header does not say whether it is animated: frames
        // are known once it is decoded here.
        let jxlFrames: Int? = ImageFormat.jxl.isDecodedHere ? 1 : nil
        let expected: [(String, String, Int, Int, Int?, String)] = [
            ("/a.avif", "avif", 64, 48, 1, "image/avif"),
            ("/a.jxl", "jxl", 64, 48, jxlFrames, "image/jxl"),
            ("/anim.webp", "webp", 64, 48, 3, "image/webp"),
            ("/a.ico", "ico", 64, 48, 1, "image/x-icon"),
            ("/a.tif", "tiff", 64, 48, 1, "image/tiff"),
        ]
        for (path, format, width, height, frames, type) in expected {
            let e = try #require(entry(path), "\(path) not in the report")
            #expect(e["outcome"] as? String == "downloaded", "\(path)")
            #expect(e["format"] as? String == format, "\(path)")
            #expect(e["width"] as? Int == width && e["height"] as? Int == height, "\(path): \(e)")
            #expect(e["frames"] as? Int == frames && (frames != nil || e["frames"] is NSNull), "\(path): \(e)")
            #expect(e["content_type"] as? String == type, "\(path)")
        }
        let blob = try #require(entry("/blob"))
        #expect(blob["outcome"] as? String == "downloaded" && blob["format"] as? String == "unknown")
        #expect(blob["width"] is NSNull && blob["frames"] is NSNull)
        #expect(f.cacheFiles().count == served.count + 1)

        // --strict-formats refuses the unknown data (and what is not decoded).
        let strict = try f.warm([manifest, "--strict-formats", "--refresh", "--max-failures", "100", "--report", report])
        #expect(strict.status == 0)
        let blobStrict = try #require(try f.report(report).entries.first { $0["url"] as? String == f.server.url("/blob") })
        #expect(blobStrict["error"] as? String == "bad-image")
        #expect((blobStrict["reason"] as? String)?.hasPrefix("unknown format (unknown signature 00 01 02 fe) is not accepted") == true)
    }
}
