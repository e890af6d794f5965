import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct ManifestTests {
    func read(_ text: [UInt8], options: ManifestOptions = ManifestOptions()) throws -> ([ManifestEntry], [ManifestProblem]) {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.txt"
        FileManager.default.createFile(atPath: path, contents: Data(text))
        var entries: [ManifestEntry] = []
        var problems: [ManifestProblem] = []
        try ManifestReader(options: options).read(path: path, fileIndex: 0, entry: { entries.append($0) }, problem: { problems.append($0) })
        return (entries, problems)
    }

    func read(_ text: String, options: ManifestOptions = ManifestOptions()) throws -> ([ManifestEntry], [ManifestProblem]) {
        try read(Array(text.utf8), options: options)
    }

    @Test func textLinesWithFieldsCommentsBlankCRLFAndBOM() throws {
        let text = "\u{FEFF}# comment\r\nhttps://e.com/a.jpg\r\n\r\n   \nhttp://e.com/b.png priority=high\t key=custom-b\n  # indented comment\nhttps://e.com/c.gif priority=low"
        let (entries, problems) = try read(text)
        #expect(problems.isEmpty)
        #expect(entries.map(\.url) == ["https://e.com/a.jpg", "http://e.com/b.png", "https://e.com/c.gif"])
        #expect(entries.map(\.key) == ["https://e.com/a.jpg", "custom-b", "https://e.com/c.gif"])
        #expect(entries.map(\.priority) == [nil, .high, .low])
        #expect(entries.map(\.source.line) == [2, 5, 7])
    }

    @Test func jsonLines() throws {
        let text = """
        {"url": "https://e.com/a.jpg", "priority": "high", "key": "k1"}
        {"url": "https://e.com/b.jpg"}
        {"url": 5}
        {"url": "https://e.com/c.jpg", "priority": "urgent"}
        {"url": "https://e.com/d.jpg", "extra": 1}
        {not json
        """
        let (entries, problems) = try read(text)
        #expect(entries.map(\.key) == ["k1", "https://e.com/b.jpg"])
        #expect(entries[0].priority == .high)
        #expect(problems.map(\.source.line) == [3, 4, 5, 6])
        #expect(problems[0].reason.contains("url"))
        #expect(problems[1].reason.contains("priority"))
        #expect(problems[2].reason.contains("extra"))
        #expect(problems[3].reason == "invalid JSON object")
    }

    @Test func onlyHTTPAndHTTPSAreAccepted() throws {
        let text = "ftp://e.com/a.jpg\nfile:///etc/passwd\nnot a url\nhttps://\nHTTPS://E.COM/X.JPG\njavascript:alert(1)\n/relative/path.jpg"
        let (entries, problems) = try read(text)
        #expect(entries.map(\.url) == ["HTTPS://E.COM/X.JPG"])
        #expect(problems.count == 6)
        #expect(problems[0].reason.hasPrefix("unsupported scheme 'ftp'"))
        #expect(problems[1].reason.hasPrefix("unsupported scheme 'file'"))
        #expect(problems[3].reason.hasPrefix("URL has no host"))
    }

    @Test func unknownFieldsAndBadPrioritiesAreReported() throws {
        let (entries, problems) = try read("https://e.com/a.jpg priority=urgent\nhttps://e.com/b.jpg color=red\nhttps://e.com/c.jpg stray\n")
        #expect(entries.isEmpty)
        #expect(problems.map(\.source.line) == [1, 2, 3])
        #expect(problems[0].reason.contains("urgent"))
    }

    @Test func credentialsNeverAppearInProblems() throws {
        let (_, problems) = try read("ftp://alice:s3cret@e.com/a.jpg\n")
        #expect(problems.count == 1)
        #expect(!problems[0].reason.contains("s3cret"))
        #expect(Redaction.url("https://alice:s3cret@e.com/a.jpg?x=@y") == "https://***@e.com/a.jpg?x=@y")
        #expect(Redaction.url("https://e.com/a@b.jpg") == "https://e.com/a@b.jpg")
    }

    @Test func binaryGarbageInvalidUTF8NulAndHugeLines() throws {
        var bytes = Array("https://e.com/ok.jpg\n".utf8)
        bytes += [0xC3, 0x28, 0x0A]                              // invalid UTF-8
        bytes += Array("https://e.com/a\u{0}.jpg\n".utf8)        // NUL
        bytes += [UInt8](repeating: 0x41, count: 1 << 20) + [0x0A]  // 1 MiB line
        bytes += Array("https://e.com/after.jpg".utf8)           // no final newline
        let (entries, problems) = try read(bytes)
        #expect(entries.map(\.url) == ["https://e.com/ok.jpg", "https://e.com/after.jpg"])
        #expect(problems.map(\.source.line) == [2, 3, 4])
        #expect(problems[0].reason.contains("UTF-8"))
        #expect(problems[1].reason.contains("NUL"))
        #expect(problems[2].reason.contains("longer than"))
    }

    @Test func keyStripQuery() throws {
        var o = ManifestOptions()
        o.stripQueryFromKeys = true
        let (entries, _) = try read("https://e.com/a.jpg?sig=1#f\nhttps://e.com/b.jpg?sig=2 key=explicit\n", options: o)
        #expect(entries.map(\.key) == ["https://e.com/a.jpg", "explicit"])
        #expect(entries[0].url == "https://e.com/a.jpg?sig=1#f")
    }

    @Test func missingFileIsAnUnreadableManifest() {
        let error = #expect(throws: ImgWarmError.self) {
            try ManifestReader().read(path: "/nonexistent/m.txt", fileIndex: 0, entry: { _ in }, problem: { _ in })
        }
        #expect(error?.reason == .manifestUnreadable(path: "/nonexistent/m.txt", why: "cannot open manifest: No such file or directory"))
    }
}
