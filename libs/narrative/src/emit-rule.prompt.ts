// The instruction that makes the model report state changes, and its reminder. History is prose
// only, so the worked example here is the only place the model sees the format: it shows every
// event type, in an order the referee accepts (a thing enters before a line uses its id).
// These strings sit in the cached system block and at the end of every prompt: change their
// bytes deliberately, and keep the example in step with the event types.

export const EMIT_RULE = `State block. After the narration, report what changed in the story world this turn in one fenced block that opens with \`\`\`state and closes with \`\`\`: one JSON object per line (JSON Lines), one event per line. If nothing changed, omit the block. Never narrate inside the block.

Events:
{"type":"enter","id":…,"name":…,"kind":…,"status":…,"at":…,"desc":…} a new character, place, item, faction or other enters the story. kind is one of character, place, item, faction, other. status, at and desc are optional; at is the id of a place.
{"type":"status","id":…,"to":…} its status changes (alive, wounded, dead, missing, destroyed…: a short lower-case word).
{"type":"move","id":…,"to":…} a character or item is now at another place; to is that place's id.
{"type":"gain","holder":…,"item":…} and {"type":"lose","holder":…,"item":…} possession changes.
{"type":"fact","text":…,"about":[…]} an established fact worth keeping, one sentence; about lists ids and is optional.

Ids are lower-case slugs (a-z, 0-9, hyphens) that you choose at enter and reuse exactly afterwards; names may change, ids never. player is the protagonist's id. Use only ids from the story state, or ids entered earlier in the same block. Names are at most 80 characters, fact text at most 300.

Example (mira, and the lantern the player carries, entered on earlier turns):
The storm drives you into the old lighthouse. Mira stumbles in after you, bleeding, and presses a brass key into your hand. Your lantern gutters out and you leave it by the door.
\`\`\`state
{"type":"enter","id":"lighthouse","name":"The Old Lighthouse","kind":"place"}
{"type":"enter","id":"brass-key","name":"Brass key","kind":"item","desc":"Opens the lamp room"}
{"type":"move","id":"player","to":"lighthouse"}
{"type":"move","id":"mira","to":"lighthouse"}
{"type":"status","id":"mira","to":"wounded"}
{"type":"gain","holder":"player","item":"brass-key"}
{"type":"lose","holder":"player","item":"lantern"}
{"type":"fact","text":"Mira trusted the player with the lamp-room key","about":["mira","brass-key"]}
\`\`\``;

export const EMIT_REMINDER =
  '[After the narration, append the ```state block: one JSON event per line for what changed this turn, reusing known ids. Omit the block if nothing changed.]';
