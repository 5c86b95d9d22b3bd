import { describe, expect, it } from "vitest";
import { keyDigest } from "../gateway/build.js";
import { keyChanges, parseShowMap } from "../gateway/keySync.js";

const key = (c: string) => c.repeat(32);
const A = { name: "alice", key: key("a") }, B = { name: "bob", key: key("b") }, C = { name: "carol", key: key("c") };
const live = (...rows: [string, string][]) => parseShowMap(rows.map(([k, n], i) => `0x55a8e1ffbe${i}0 ${keyDigest(k)} ${n}\n`).join(""));

describe("key map changes for the runtime API", () => {
  it("reads show map's lines, and nothing else it prints", () => {
    const m = parseShowMap(`0x55a8e1ffbed0 ${keyDigest(A.key)} alice\n0x7f12e005a7d0 ${keyDigest(B.key)} bob\n\n`);
    expect([...m]).toEqual([[keyDigest(A.key), ["alice"]], [keyDigest(B.key), ["bob"]]]);
    expect(parseShowMap("Unknown map identifier. Please use #<id> or <file>.\n").size).toBe(0);
  });

  it("adds a new key, deletes a revoked one, sets a renamed one, and leaves the others alone", () => {
    const c = keyChanges("/m/keys.map", live([A.key, "alice"], [B.key, "bob"], [C.key, "carol"]), [A, { ...C, name: "carol-pro" }, { name: "dave", key: key("d") }]);
    expect(c.commands).toEqual([
      `add map /m/keys.map ${keyDigest(key("d"))} dave`,
      `set map /m/keys.map ${keyDigest(C.key)} carol-pro`,
      `del map /m/keys.map ${keyDigest(B.key)}`,
    ]);
    expect({ added: c.added, revoked: c.revoked, renamed: c.renamed }).toEqual({ added: ["dave"], revoked: ["bob"], renamed: ["carol -> carol-pro"] });
    expect(c.commands.join("\n")).not.toContain(A.key.slice(0, 8));
  });

  it("sends nothing when the running map already holds the configured keys", () => {
    expect(keyChanges("/m/keys.map", live([A.key, "alice"], [B.key, "bob"]), [B, A]).commands).toEqual([]);
  });

  it("evens out a key added twice by hand to one name", () => {
    const c = keyChanges("/m/keys.map", live([A.key, "alice"], [A.key, "mallory"]), [A]);
    expect(c.commands).toEqual([`set map /m/keys.map ${keyDigest(A.key)} alice`]);
  });
});
