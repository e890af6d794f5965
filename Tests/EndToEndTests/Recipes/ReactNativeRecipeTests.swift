import Crypto
import Foundation
import Testing
import TestSupport

/// The warm side of docs/recipes/react-native.md: the script warms both
/// Android folders; the clean-room Fresco reader and OkHttp's own Cache
/// (origin stopped, plain requests after --expiration) read them back.
@Suite(.serialized) struct ReactNativeRecipeTests {
    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test func scriptFillsImageCacheAndHTTPCache() throws {
        let fresco = try FrescoReader.needed()
        guard let okhttp = OkHttpCacheReader.shared else {
            try prerequisiteMissing("javac/java, libokhttp-java or libokio-java not found: reading with OkHttp's Cache did not run")
        }
        let f = try WarmFixture()
        let urls = f.servePNGs(5)
        let manifest = f.writeManifest(urls)
        let out = f.dir + "/device-cache"
        let image = try AndroidRecipeTests.script("react-native/warm-react-native-cache.sh", [manifest, out])
        #expect(image.status == 0, "\(image.output)")
        var env = ["IMGWARM_ARGS": "--expiration 30d"]
        env["IMGWARM"] = BinaryRunner.executable
        let fetch = try Self.run("react-native/warm-react-native-cache.sh", [manifest, out, "react-native-fetch"], env)
        #expect(fetch.status == 0, "\(fetch.output)")
        #expect(!FileManager.default.fileExists(atPath: out + "/image_cache/.imgwarm"))
        #expect(!FileManager.default.fileExists(atPath: out + "/http-cache/.imgwarm"))
        f.server.shutdown()
        let frescoReading = try fresco.read(out + "/image_cache", urls: urls)
        let okReading = try okhttp.read(out + "/http-cache", force: false, urls: urls)
        for url in urls {
            let sha = Self.sha256(f.served[String(url.dropFirst(f.server.baseURL.count))] ?? [])
            #expect(frescoReading.entries[url]?.sha256 == sha, "\(frescoReading.output)")
            #expect(okReading.answers[url]?.sha256 == sha && okReading.answers[url]?.source == "cache", "\(okReading.output)")
        }
        #expect(try AndroidRecipeTests.script("react-native/warm-react-native-cache.sh", [manifest]).status == 2)
    }

    static func run(_ path: String, _ args: [String], _ extra: [String: String]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BinaryRunner.examplesDirectory + "/" + path)
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
