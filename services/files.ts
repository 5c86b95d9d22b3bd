/** Where each file a service mounts comes from, once the generated sets are known. Pure. */
import type { FileSpec, GeneratedSet, ServiceSpec } from "./types.js";

/** One file of a generated set: its name in the set, its content and whether it holds a secret. */
export interface GeneratedFile<C> {
  readonly name: string;
  readonly content: C;
  readonly secret?: boolean;
}

/** The generated sets a deployment supplies, by set. */
export type GeneratedFiles<C> = Readonly<Partial<Record<GeneratedSet, readonly GeneratedFile<C>[]>>>;

/** A file as placed into the container: its path there and where its content comes from. */
export type PlacedFile<C> = { readonly path: string; readonly executable: boolean } & (
  | { readonly from: "package" | "bundle"; readonly source: string }
  | { readonly from: "generated"; readonly set: GeneratedSet; readonly name: string; readonly content: C; readonly secret: boolean }
);

function place<C>(f: FileSpec, generated: GeneratedFiles<C>, service: string): PlacedFile<C>[] {
  if (f.from !== "generated") return [{ from: f.from, path: f.path, source: f.source, executable: f.executable ?? false }];
  const files = generated[f.set];
  if (!files) throw new Error(`service ${service} needs the generated "${f.set}" files, which its deployment does not supply`);
  return files.map((g) => ({ from: "generated", set: f.set, name: g.name, content: g.content, secret: g.secret ?? false, path: `${f.dir}/${g.name}`, executable: false }));
}

/** The files a service mounts, in order, with every generated set expanded. */
export function placeFiles<C>(svc: ServiceSpec, generated: GeneratedFiles<C>): PlacedFile<C>[] {
  return svc.files.flatMap((f) => place(f, generated, svc.name));
}
