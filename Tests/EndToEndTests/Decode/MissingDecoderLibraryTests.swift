import Foundation
import Testing
import TestSupport

/// The real binary on a machine where the AVIF, HEIF or JPEG XL library
/// cannot be opened: a damaged copy under the library's soname comes first
/// on LD_LIBRARY_PATH (TestSupport's CodecLibrary), so the dynamic loader
/// itself refuses it and the binary runs its production path. `warm` fails
/// the entry as `no-decoder`, naming the package, stores nothing and keeps
/// the URL off the failed-URL list; `cache verify` lists the file as not
/// checked, exits 1 and never deletes it.
@Suite struct MissingDecoderLibrary {
    struct Format: CustomStringConvertible, Sendable {
        /// The library (`avif`), the format's name in reasons, the file.
        var library: String
        var display: String
        var file: String
        var description: String { library }
    }

    static let formats = [
        Format(library: "avif", display: "AVIF", file: "a.avif"),
        Format(library: "heif", display: "HEIC", file: "a.heic"),
        Format(library: "jxl", display: "JPEG XL", file: "a.jxl"),
    ]

    /// An image of the format from its CLI encoder (scripts/setup.sh
    /// installs them).
    static func image(_ format: Format, in dir: String) throws -> [UInt8]? {
        let convert = try DecodeVerifyCommand.encoder("convert")
        let src = dir + "/src.png", out = dir + "/" + format.file
        guard DecodeVerifyCommand.encode(convert, ["-size", "40x30", "gradient:red-blue", src], output: src) else { return nil }
        let step: (String, [String])
        switch format.library {
        case "avif": step = ("avifenc", ["-s", "10", src, out])
        case "heif": step = ("heif-enc", [src, "-o", out])
        default: step = ("cjxl", [src, out])
        }
        guard DecodeVerifyCommand.encode(try DecodeVerifyCommand.encoder(step.0), step.1, output: out) else { return nil }
        return try #require(FileManager.default.contents(atPath: out).map { [UInt8]($0) })
    }

    /// The format's library on this machine (TestSupport's rule when it
    /// cannot be found: skipped, failed under CI).
    static func library(_ format: Format) throws -> CodecLibrary {
        switch CodecLibrary.find(format.library) {
        case .success(let lib): return lib
        case .failure(let why): try prerequisiteMissing("\(why)")
        }
    }

    @Test(arguments: formats) func warmFailsTheEntryWithoutBlamingTheURL(_ format: Format) throws {
        let lib = try Self.library(format)
        let f = try WarmFixture()
        guard let bytes = try Self.image(format, in: f.dir) else { return }
        let broken = try lib.damagedCopyFolder()
        defer { try? FileManager.default.removeItem(atPath: broken) }
        f.server.setFile("/" + format.file, bytes: bytes, contentType: "image/" + format.library)
        let good = f.servePNGs(1)[0]
        let url = f.server.url("/" + format.file)
        let manifest = f.writeManifest([url, good])
        let report = f.dir + "/report.json"

        let r = try f.warm([manifest, "--report", report], environment: ["LD_LIBRARY_PATH": broken])
        #expect(r.status == 1, "\(r.stderr)")
        let rows = try f.report(report)
        let row = try #require(rows.entries.first { $0["url"] as? String == url })
        #expect(row["outcome"] as? String == "failed")
        #expect(row["error"] as? String == "no-decoder")
        #expect(row["file"] is NSNull)
        let reason = row["reason"] as? String ?? ""
        #expect(reason.hasPrefix("\(format.display): cannot validate, \(lib.soname) cannot be loaded (apt-get install --reinstall \(lib.package)): "),
                "\(reason)")
        #expect(!reason.contains("could not be decoded") && !reason.contains("corrupt"), "\(reason)")
        // The failure line names the URL and the reason, once.
        #expect(r.stderr.split(separator: "\n").filter { $0.contains(url) } == ["imgwarm: \(url): \(reason)"], "\(r.stderr)")
        // Counted as failed (the summary and the totals), the PNG as usual.
        #expect(r.stdout.contains("1 downloaded, 1 failed") || r.stderr.contains("1 downloaded, 1 failed"), "\(r.stdout)\(r.stderr)")
        #expect((rows.totals["errors"] as? [String: Int]) == ["no-decoder": 1])
        // Nothing stored under any name, and the URL is not on the failed list.
        let path = try f.cachePath(url)
        #expect(!FileManager.default.fileExists(atPath: path))
        let failed = try BinaryRunner.run(["cache", "failed", "--json", "--cache", f.cache])
        let list = try JSONSerialization.jsonObject(with: Data(failed.stdout.utf8)) as? [Any]
        #expect(list?.isEmpty == true, "\(failed.stdout)")

        // With the library back, the next run fetches it (nothing blocks it).
        let again = try f.warm([manifest, "--report", report])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try f.report(report).entries.first { $0["url"] as? String == url }?["outcome"] as? String == "downloaded")
        #expect(FileManager.default.contents(atPath: path).map { [UInt8]($0) } == bytes)
    }

    @Test(arguments: formats) func verifyListsTheFileAsNotCheckedAndKeepsIt(_ format: Format) throws {
        let lib = try Self.library(format)
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard let bytes = try Self.image(format, in: dir) else { return }
        let cache = dir + "/cache"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let file = cache + "/aef7184dae84372263ed9aa2e8a91439"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let broken = try lib.damagedCopyFolder()
        defer { try? FileManager.default.removeItem(atPath: broken) }

        let text = try BinaryRunner.run(["cache", "verify", "--delete", "--cache", cache], environment: ["LD_LIBRARY_PATH": broken])
        #expect(text.status == 1, "\(text.stdout)\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let prefix = "\(file): not checked: no decoder, kept; \(format.display): cannot validate, \(lib.soname) cannot be loaded"
        #expect(lines.first?.hasPrefix(prefix) == true, "\(lines)")
        #expect(lines.last == "checked 1 file: 0 broken, 1 not checked (no decoder), 0 stray temp files", "\(lines)")
        #expect(FileManager.default.contents(atPath: file).map { [UInt8]($0) } == bytes, "verify --delete removed it")

        let json = try BinaryRunner.run(["cache", "verify", "--json", "--cache", cache], environment: ["LD_LIBRARY_PATH": broken])
        #expect(json.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let unchecked = object?["unchecked"] as? [[String: String]]
        #expect(unchecked?.map { $0["path"] } == [file], "\(json.stdout)")
        #expect((object?["broken"] as? [Any])?.isEmpty == true)

        // The same file with the library there: a valid image, clean.
        let clean = try BinaryRunner.run(["cache", "verify", "--cache", cache])
        #expect(clean.status == 0, "\(clean.stdout)")
    }
}
