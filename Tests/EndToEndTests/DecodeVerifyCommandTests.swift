import Foundation
import Testing
import TestSupport

/// `imgwarm cache verify` as a user runs it: output lines, JSON, exit codes.
@Suite struct DecodeVerifyCommand {
    /// The smallest valid GIF (1x1, one frame), written out by hand.
    static let tinyGIF: [UInt8] = Array("GIF89a".utf8) + [
        0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00,
        0x21, 0xF9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00,
        0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
        0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
    ]

    /// The imgwarm built next to this test bundle (`swift build --build-tests`).
    static var binary: String? {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent(), dir.deletingLastPathComponent().deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("imgwarm").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static func run(_ args: [String]) throws -> (status: Int32, out: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(binary, "imgwarm binary not built"))
        process.arguments = args
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
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
}
