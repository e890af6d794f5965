import Crypto
import Foundation
import Testing
import TestSupport

/// The warm side of docs/recipes/android-glide-coil.md and
/// docs/recipes/flutter.md: the scripts under examples/ run against the
/// loopback server with the real binary, and what they leave is read back
/// by OkHttp's DiskLruCache and by Python's sqlite3. The app side (Kotlin,
/// Dart, adb) is shown on the pages, not run here.
@Suite struct AndroidRecipeTests {
    static func script(_ path: String, _ args: [String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BinaryRunner.examplesDirectory + "/" + path)
        p.arguments = args
        var env = ProcessInfo.processInfo.environment
        env["IMGWARM"] = BinaryRunner.executable
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test(.needs(DiskLruReader.shared != nil, "needs javac, java, libokhttp-java, libokio-java: reading with OkHttp\'s DiskLruCache did not run"),
          arguments: [("glide", "image_manager_disk_cache", 1, 1), ("coil", "coil3_disk_cache", 3, 2), ("coil2", "image_cache", 1, 2)])
    func androidScriptLeavesAFolderOkHttpReadsWithoutState(layout: String, folder: String, appVersion: Int, valueCount: Int) throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(6)
        f.server.setFile("/broken.jpg", bytes: Array("<html>gone</html>".utf8), contentType: "text/html")
        let manifest = f.writeManifest(urls + [f.server.url("/broken.jpg")])
        let out = f.dir + "/assets"
        let r = try Self.script("android/warm-android-cache.sh", [manifest, out, layout, "20KiB"])
        // The broken page is named on stderr and fails the script; the good images are in.
        #expect(r.status == 1 && r.output.contains("/broken.jpg"), "\(r.output)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out + "/" + folder)
        #expect(!names.contains(".imgwarm") && names.contains("journal"), "\(names)")
        let reader = try #require(DiskLruReader.shared)
        let reading = try reader.read(out + "/" + folder, appVersion: appVersion, valueCount: valueCount)
        #expect(reading.status == 0 && !reading.stderr.contains("corrupt"), "\(reading.stderr)")
        var total = 0
        for (key, values) in reading.entries {
            let url = try #require(urls.first { Self.sha256(Array($0.utf8)) == key })
            #expect(values.last?.sha256 == Self.sha256(f.served[String(url.dropFirst(f.server.baseURL.count))] ?? []))
            total += values.reduce(0) { $0 + $1.length }
        }
        // Pruned to the app's size (20 KiB) as the library would trim it.
        #expect(!reading.entries.isEmpty && total <= 20 * 1024)
        #expect(try Self.script("android/warm-android-cache.sh", [manifest, out]).status == 2)
    }

    @Test(.needsTools("python3", for: "reading the database with Python's sqlite3"))
    func flutterScriptLeavesTheDatabaseAndFilesWithoutState() throws {
        let f = try WarmFixture()
        let urls = f.servePNGs(5)
        let manifest = f.writeManifest(urls)
        let out = f.dir + "/assets"
        let r = try Self.script("flutter/warm-flutter-cache.sh", [manifest, out])
        #expect(r.status == 0, "\(r.output)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out)) == ["libCachedImageData.db", "libCachedImageData"])
        let rows = try #require(runPython("""
            import sqlite3, sys, os
            db = sqlite3.connect(sys.argv[1])
            for url, rel in db.execute("SELECT url, relativePath FROM cacheObject ORDER BY url"):
                print(url, os.path.getsize(os.path.join(sys.argv[2], rel)))
            """, [out + "/libCachedImageData.db", out + "/libCachedImageData"]))
        let lines = rows.output.split(separator: "\n").map(String.init)
        #expect(lines == urls.sorted().map { "\($0) \(f.served[String($0.dropFirst(f.server.baseURL.count))]!.count)" }, "\(rows.output)")
        // More objects than the app keeps: refused.
        let tooMany = try Self.script("flutter/warm-flutter-cache.sh", [manifest, f.dir + "/assets2", "3"])
        #expect(tooMany.status == 2 && tooMany.output.contains("maxNrOfCacheObjects"), "\(tooMany.output)")
    }
}
