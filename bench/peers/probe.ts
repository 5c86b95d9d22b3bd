/**
 * The peers bench's calls outside wrk: one POST (TLS or not; the bench's certificate is
 * self-signed), waiting for a proxy to answer, and the correctness probes whose answers
 * bench/peers/correctness.ts judges.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { jsonRpc } from "../../devtools/net.js";
import type { MixChain } from "../mixes.js";
import { callBody, describe, judgeAnswer, probeCalls, summarize, type Correctness, type HeadSample, type Verdict } from "./correctness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One JSON-RPC POST; the raw answer text. */
export const post = (url: string, body: string) =>
  new Promise<string>((resolve, reject) => {
    const request = url.startsWith("https:") ? httpsRequest : httpRequest;
    const req = request(url, { method: "POST", rejectUnauthorized: false, headers: { "Content-Type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d) => (text += d)).on("end", () => resolve(text));
    });
    req.on("error", reject).end(body);
  });

export async function waitAnswers(name: string, url: string): Promise<void> {
  let last = "";
  for (let i = 0; i < 300; i++) {
    try {
      last = await post(url, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
      if (JSON.parse(last).result) return;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(100);
  }
  throw new Error(`${name} does not answer eth_chainId at ${url}: ${last}`);
}

/**
 * Each proxy's answers to 120 calls on final data against the node's, then 20 reads of its
 * `latest` against the node's head read just before; printed per proxy as it goes.
 */
export async function checkCorrectness(nodeUrl: string, chain: MixChain, proxies: readonly { name: string; http: string }[]): Promise<Record<string, Correctness>> {
  const correctness: Record<string, Correctness> = {};
  const calls = probeCalls(chain.oldLast, chain.txs, 120);
  const nodeAnswers = await Promise.all(calls.map(async (c) => JSON.parse(await post(nodeUrl, callBody(c)))));
  for (const c of proxies) {
    const verdicts: Verdict[] = [];
    for (let i = 0; i < calls.length; i += 8) {
      const batch = calls.slice(i, i + 8);
      verdicts.push(...(await Promise.all(batch.map(async (call, j) => judgeAnswer(call, nodeAnswers[i + j], await post(c.http, callBody(call)).catch((e) => String(e)))))));
    }
    const heads: HeadSample[] = [];
    for (let i = 0; i < 20; i++) {
      const nodeBefore = parseInt(await jsonRpc(nodeUrl, "eth_blockNumber"), 16);
      const peer = parseInt(JSON.parse(await post(c.http, '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}')).result, 16);
      heads.push({ nodeBefore, peer });
      await sleep(150);
    }
    correctness[c.name] = summarize(verdicts, heads);
    console.log(`correctness ${c.name}: ${describe(correctness[c.name])}${correctness[c.name].examples.length ? `; ${correctness[c.name].examples.join("; ")}` : ""}`);
  }
  return correctness;
}
