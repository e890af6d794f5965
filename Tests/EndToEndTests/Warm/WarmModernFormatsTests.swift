import Foundation
import Testing
import TestSupport
import ImgWarmKit

/// `warm` decodes AVIF (sequences too), HEIC and JPEG XL (container too):
/// files from the CLI encoders pass with format, size and frames in the
/// report, also under --strict-formats; a cut copy is a bad image whose
/// reason names the format, and is not cached.
@Suite struct WarmModernFormats {
    @Test func decodedFormatsAreReportedAndCutCopiesRefused() throws {
        let convert = try DecodeVerifyCommand.encoder("convert"), avifenc = try DecodeVerifyCommand.encoder("avifenc"),
            cjxl = try DecodeVerifyCommand.encoder("cjxl"), heifEnc = try DecodeVerifyCommand.encoder("heif-enc")
        let f = try WarmFixture()
        let work = f.dir + "/images"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let src = work + "/src.png", src2 = work + "/src2.png"
        let steps: [(String, [String], String)] = [
            (convert, ["-size", "80x60", "gradient:red-blue", src], src),
            (convert, ["-size", "80x60", "gradient:green-white", src2], src2),
            (avifenc, ["-s", "10", src, src2, src, work + "/seq.avif"], work + "/seq.avif"),
            (heifEnc, [src, "-o", work + "/a.heic"], work + "/a.heic"),
            (cjxl, [src, work + "/c.jxl", "--container=1"], work + "/c.jxl"),
        ]
        for (tool, args, output) in steps {
            #expect(DecodeVerifyCommand.encode(tool, args, output: output), "\(output)")
        }
        func bytes(_ name: String) throws -> [UInt8] {
            try #require(FileManager.default.contents(atPath: work + "/" + name).map { [UInt8]($0) }, "\(name)")
        }
        let files: [(String, String, Int, String)] = [
            ("seq.avif", "avif", 3, "image/avif"),
            ("a.heic", "heic", 1, "image/heic"),
            ("c.jxl", "jxl", 1, "image/jxl"),
        ]
        for (name, _, _, type) in files {
            let data = try bytes(name)
            f.server.setFile("/" + name, bytes: data, contentType: type)
            f.server.setFile("/cut-" + name, bytes: Array(data.prefix(data.count * 2 / 3)), contentType: type)
        }
        let urls = files.map { f.server.url("/" + $0.0) } + files.map { f.server.url("/cut-" + $0.0) }
        let manifest = f.writeManifest(urls)
        let report = f.dir + "/report.json"
        for strict in [false, true] {
            let r = try f.warm([manifest, "--report", report, "--refresh", "--retry-failed", "--max-failures", "100"] + (strict ? ["--strict-formats"] : []))
            #expect(r.status == 0, "\(r.stderr)")
            let entries = try f.report(report).entries
            func entry(_ path: String) throws -> [String: Any] {
                try #require(entries.first { $0["url"] as? String == f.server.url(path) }, "\(path) not in the report")
            }
            for (name, format, frames, _) in files {
                let good = try entry("/" + name)
                #expect(good["outcome"] as? String == "downloaded", "\(name): \(good)")
                #expect(good["format"] as? String == format && good["frames"] as? Int == frames, "\(name): \(good)")
                #expect(good["width"] as? Int == 80 && good["height"] as? Int == 60, "\(name): \(good)")
                let cut = try entry("/cut-" + name)
                #expect(cut["error"] as? String == "bad-image", "\(name): \(cut)")
                let display = ["avif": "AVIF", "heic": "HEIC", "jxl": "JPEG XL"][format]!
                #expect((cut["reason"] as? String)?.hasPrefix("truncated \(display): ") == true, "\(name): \(cut)")
            }
            #expect(f.cacheFiles().count == files.count)
        }
    }
}
