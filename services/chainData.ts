/** What a chain-data volume holds and how big it must be, from the sizing table for its node's host. Pure. */
import { chainDataGB, type NodeSlot, type SizedClient, type StackSettings } from "../config/index.js";
import type { VolumeSpec } from "./types.js";

export function chainData(settings: StackSettings, client: SizedClient, slot: NodeSlot): Pick<VolumeSpec, "chainData"> {
  const sizeGB = chainDataGB(settings, client, slot.host);
  return sizeGB === undefined ? {} : { chainData: { client, sizeGB } };
}
