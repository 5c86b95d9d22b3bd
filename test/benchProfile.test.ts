/** Where the hit bench says a hit's CPU goes (bench/profile.ts): perf's report grouped by library. */
import { describe, expect, it } from "vitest";
import { perfShares, sampleGroup } from "../bench/profile.js";

const REPORT = `# Samples: 8K of event 'cpu-clock:pppH'
#
# Overhead  Shared Object            Symbol
# ........  .......................  ..............................
#
    12.50%  libcrypto.so.3           [.] aesni_gcm_encrypt
     9.25%  haproxy                  [.] acl_exec_cond                              -      -
     7.00%  [kernel.kallsyms]        [k] copy_user_generic_string
     6.75%  liblua5.4.so.0.0.0       [.] luaV_execute
     4.00%  libc.so.6                [.] _int_malloc
     3.50%  haproxy                  [.] sample_process
     1.00%  libssl.so.3              [.] ssl3_write_bytes
     0.75%  libz.so.1                [.] deflate
`;

describe("perf samples by where they fall", () => {
  it("sums each library's share and keeps the hottest symbols in order", () => {
    const p = perfShares(REPORT);
    expect(p.groups).toEqual({
      "TLS and crypto (libssl, libcrypto)": 13.5,
      "HAProxy (rules, HTTP, scheduler, its Lua glue)": 12.8,
      "kernel (syscalls, TCP)": 7,
      "Lua (liblua)": 6.75,
      "C library (malloc, memcpy)": 4,
      other: 0.75,
    });
    expect(p.top[0]).toEqual({ share: 12.5, dso: "libcrypto.so.3", symbol: "aesni_gcm_encrypt" });
    expect(p.top.map((t) => t.symbol)).toContain("luaV_execute");
  });

  it("names the group of a library by its file", () => {
    expect(sampleGroup("libssl.so.3")).toMatch(/^TLS/);
    expect(sampleGroup("liblua5.4.so.0")).toMatch(/^Lua/);
    expect(sampleGroup("[kernel.kallsyms]")).toMatch(/^kernel/);
    expect(sampleGroup("libc.so.6")).toMatch(/^C library/);
    expect(sampleGroup("libzstd.so.1")).toBe("other");
  });
});
