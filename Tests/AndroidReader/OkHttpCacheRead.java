// Opens a folder as OkHttp's HTTP cache (Debian's libokhttp-java, OkHttp
// 3.13: okhttp3.Cache in an OkHttpClient) and requests URLs through it,
// printing one line per URL:
//
//   URL <tab> status <tab> body length <tab> SHA-256 of the body <tab> cache|network|both|none
//
// or `URL <tab> ERR <tab> message` when the call failed (the origin is
// expected to be stopped: only the cache can answer). Then `URLS <tab> url`
// per entry `Cache.urls()` lists, and after `flush()`, `close()` and a
// reopen `REOPENED <tab> count`.
//
// Usage: java OkHttpCacheRead DIR force|plain URL...
// force: each request with CacheControl.FORCE_CACHE; plain: as an app's.
import java.io.File;
import java.security.MessageDigest;
import java.util.Iterator;
import okhttp3.Cache;
import okhttp3.CacheControl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

public final class OkHttpCacheRead {
  public static void main(String[] args) throws Exception {
    File dir = new File(args[0]);
    boolean force = args[1].equals("force");
    Cache cache = new Cache(dir, Long.MAX_VALUE);
    OkHttpClient client = new OkHttpClient.Builder().cache(cache).build();
    StringBuilder out = new StringBuilder();
    for (int i = 2; i < args.length; i++) {
      Request.Builder request = new Request.Builder().url(args[i]);
      if (force) request.cacheControl(CacheControl.FORCE_CACHE);
      try (Response response = client.newCall(request.build()).execute()) {
        byte[] body = response.body().bytes();
        String source = response.cacheResponse() != null
            ? (response.networkResponse() != null ? "both" : "cache")
            : (response.networkResponse() != null ? "network" : "none");
        out.append(args[i]).append('\t').append(response.code()).append('\t').append(body.length)
            .append('\t').append(hex(MessageDigest.getInstance("SHA-256").digest(body)))
            .append('\t').append(source).append('\n');
      } catch (Exception e) {
        out.append(args[i]).append("\tERR\t").append(String.valueOf(e).replace('\n', ' ')).append('\n');
      }
    }
    Iterator<String> urls = cache.urls();
    while (urls.hasNext()) out.append("URLS\t").append(urls.next()).append('\n');
    cache.flush();
    cache.close();
    Cache again = new Cache(dir, Long.MAX_VALUE);
    int count = 0;
    Iterator<String> reopened = again.urls();
    while (reopened.hasNext()) {
      reopened.next();
      count++;
    }
    again.close();
    out.append("REOPENED\t").append(count).append('\n');
    System.out.print(out);
    System.exit(0);
  }

  private static String hex(byte[] digest) {
    StringBuilder s = new StringBuilder();
    for (byte b : digest) s.append(String.format("%02x", b));
    return s.toString();
  }
}
