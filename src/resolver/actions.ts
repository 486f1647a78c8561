/**
 * The action a request asks for and the actions a tool performs, from general English: "remember", "save",
 * "store" create; "forget", "erase" delete; "open", "show" read; "link", "relate" create a relation… A tool's
 * actions are read from its name and the lead sentence of its description, for any catalog; a request's
 * from the first word of each clause (the imperative: "forget the entity Bob", "can you link Ana to Acme").
 * A tool doing what the request asks ranks higher, one doing something else lower (see `rank.ts`).
 *
 * @module
 */
import { foreignVerb, foreignVerbOfStem } from "./foreign_words.ts";
import { isEnglishWord, oneEditAway } from "./lexicon.ts";
import { extractLocators } from "./locators.ts";
import { beforeQualifier, splitWords, stem, STOP_WORDS } from "./tokenize.ts";

/** Every action: a tool that matches whatever the request asks (see `toolActions`' callers). */
export const ANY_ACTION = 0x3ff;

/** Action classes, as bits of a mask. */
export const ACTION = {
  create: 1,
  read: 2,
  update: 4,
  delete: 8,
  search: 16,
  list: 32,
  link: 64,
  send: 128,
  run: 256,
  toggle: 512,
  /** Not an action: a tool that reads many things (`get_transactions`), which lists when only a list is asked. */
  many: 1024,
} as const;

/**
 * Words of each action, as a request or a tool's name or lead sentence uses them. A request's verb may stand
 * for two actions: "link" creates a relation, "unlink" deletes one. Generic verbs ("make", "do", "use") and
 * words that are mostly nouns in tool text ("note", "message", "post", "call") are left out.
 */
const WORDS: readonly [string, number][] = [
  [
    "create add store save remember memorize memorise record insert register write generate produce compose",
    ACTION.create,
  ],
  ["read open show get fetch retrieve view display load print dump return inspect examine", ACTION.read],
  [
    "update edit modify change replace rename move patch fix correct amend revise adjust alter tweak swap substitute reschedule postpone set mark",
    ACTION.update,
  ],
  // Overwriting writes a whole new content over the old: a write as much as an update.
  ["overwrite", ACTION.create | ACTION.update],
  // Appending adds to what is there: a new part, and a change of the whole.
  ["append", ACTION.create | ACTION.update],
  [
    "delete remove forget erase wipe discard scrap trash eliminate obliterate expunge drop clear purge destroy nuke terminate",
    ACTION.delete,
  ],
  ["unlink disconnect detach", ACTION.delete | ACTION.link],
  ["search find lookup query locate seek grep", ACTION.search],
  ["list enumerate browse listing", ACTION.list],
  ["link relate relation relationship connect associate attach", ACTION.link],
  // Announcing and broadcasting send to many; a reply is sent, and may be added where it answers (a thread's
  // reply, a comment).
  ["send notify publish announce broadcast", ACTION.send],
  ["reply", ACTION.send | ACTION.create],
  ["run execute launch trigger start invoke", ACTION.run],
  ["toggle enable disable activate deactivate stop pause resume mute unmute silence", ACTION.toggle],
];

/**
 * Verbs and idioms of two or three words whose other words change the action ("look up" searches, "note
 * down" records, "keep in mind" remembers).
 */
const PHRASAL: ReadonlyMap<string, number> = new Map([
  ["keep in mind", ACTION.create],
  ["bear in mind", ACTION.create],
  ["make a note", ACTION.create],
  ["take note", ACTION.create],
  ["take a note", ACTION.create],
  ["look up", ACTION.search],
  ["look for", ACTION.search],
  ["search for", ACTION.search],
  ["hunt for", ACTION.search],
  ["look at", ACTION.read],
  ["get rid of", ACTION.delete],
  ["throw away", ACTION.delete],
  ["throw out", ACTION.delete],
  ["clean up", ACTION.delete],
  ["clear out", ACTION.delete],
  ["set up", ACTION.create],
  // Setting "a" thing ("set a timer", "set an alarm") starts something new, no update of a value: no action.
  ["set a", 0],
  ["set an", 0],
  ["write up", ACTION.create],
  ["keep track of", ACTION.create],
  ["keep a record of", ACTION.create],
  ["find out", ACTION.search],
  ["note down", ACTION.create],
  ["write down", ACTION.create],
  ["jot down", ACTION.create],
  // Bringing something up on the screen shows it; digging or tracking it down finds it.
  ["pull up", ACTION.read],
  ["bring up", ACTION.read],
  ["dig up", ACTION.search],
  ["track down", ACTION.search],
  ["hunt down", ACTION.search],
  // Spinning or firing up a new thing (a server, a branch) creates it; calling something off cancels it.
  ["spin up", ACTION.create],
  // Leaving a comment, a note or a reply on something adds it there.
  ["leave a", ACTION.create],
  ["leave an", ACTION.create],
  // Raising or issuing a document (an invoice, a ticket, a credit note, a refund) makes it, as does putting
  // one together or drawing one up; raising "the" limit or issuing "the" command is no such thing.
  ["raise a", ACTION.create],
  ["raise an", ACTION.create],
  ["issue a", ACTION.create],
  ["issue an", ACTION.create],
  ["issue them", ACTION.create],
  ["issue him", ACTION.create],
  ["issue her", ACTION.create],
  ["issue us", ACTION.create],
  ["put together", ACTION.create],
  ["draw up", ACTION.create],
  ["call off", ACTION.delete],
  // Kicking something off starts it ("kick off deploy-staging with BRANCH=…", "kick off a backup").
  ["kick off", ACTION.run],
  ["tear down", ACTION.delete],
  // Logging in or out is no record made.
  ["log in", 0],
  ["log into", 0],
  ["log out", 0],
  ["log off", 0],
  ["switch to", 0],
  ["turn on", ACTION.toggle],
  ["turn off", ACTION.toggle],
  ["switch on", ACTION.toggle],
  ["switch off", ACTION.toggle],
]);

/**
 * Stems of the words of the idioms and phrasal verbs of {@link PHRASAL} in a text whose action is not their
 * verb's own ("keep in mind", "pull up", "get rid of"): their verbs that are no action word of their own
 * (`keep`, `pull`, `set`) and their other words (`mind`, `rid`). The phrase names an action, so its words are no
 * object to look for ("mind" is no mind map, "pull" no pull request). A pronoun may stand inside ("keep that in
 * mind").
 */
export function idiomWords(text: string): { verbs: Set<string>; others: Set<string> } {
  const all = splitWords(text).flatMap((w) => w.parts);
  const out = { verbs: new Set<string>(), others: new Set<string>() };
  for (let i = 0; i < all.length; i++) {
    if (!PHRASAL_HEADS.has(all[i]!)) continue;
    for (const n of [4, 3, 2]) {
      let words = all.slice(i, i + n);
      let action = PHRASAL.get(words.join(" "));
      if (action === undefined && OBJECT_PRONOUNS.has(all[i + 1] ?? "")) {
        words = [all[i]!, ...all.slice(i + 2, i + 1 + n)];
        action = PHRASAL.get(words.join(" "));
      }
      if (action === undefined) continue;
      if ((actionOf(all[i]!) & action) === 0) {
        if (actionOf(all[i]!) === 0) out.verbs.add(stem(words[0]!));
        for (const w of words.slice(1)) if (!STOP_WORDS.has(w) && w.length > 1) out.others.add(stem(w));
      }
      break;
    }
  }
  return out;
}

/** "Return X to Y": giving a thing back, not returning data. */
const GIVE_BACK = /\breturn\s+(?:[\p{L}\p{N}'’-]+\s+){1,4}to\s+(?:the|my|our|a|an|his|her|their)\b/iu;

/** The first words of {@link PHRASAL}'s phrases. */
const PHRASAL_HEADS: ReadonlySet<string> = new Set([...PHRASAL.keys()].map((k) => k.split(" ")[0]!));

/**
 * Verbs of a request's imperative that tool text mostly uses otherwise: "note that Bob is tall" records,
 * where a tool's "note" is a noun. "Make" is a light verb (see {@link requestActions}).
 */
const REQUEST_ONLY: ReadonlyMap<string, number> = new Map([
  [stem("note"), ACTION.create],
  // Putting or placing a thing somewhere writes it there or moves it there.
  [stem("put"), ACTION.create | ACTION.update],
  [stem("place"), ACTION.create | ACTION.update],
  // A message named by its medium ("email Sara that…", "DM @priya", "message the team") is sent; posting in a
  // channel sends, or adds a post.
  [stem("email"), ACTION.send],
  [stem("mail"), ACTION.send],
  [stem("dm"), ACTION.send],
  [stem("message"), ACTION.send],
  [stem("post"), ACTION.send | ACTION.create],
  // Pinging someone sends them a short message or a notification.
  [stem("ping"), ACTION.send],
  // Logging time or a note on something records it there ("log 2h on WEB-12", "log a note on the account").
  [stem("log"), ACTION.create],
  // Switching a thing to another value changes it ("switch sub_777 to the annual price"); switching to a
  // place ("switch to the release branch") moves there (no action: see PHRASAL).
  [stem("switch"), ACTION.update],
]);

const MAKE = stem("make");

/** Verbs that start or stop an activity: before a gerund they switch it on or off. */
const ONGOING: ReadonlySet<string> = new Set(
  "start begin resume stop cease quit pause".split(" ").map(stem),
);

/** Words after "make" that say a new thing is made ("a new…", "…named X", "…called X"). */
const MADE: ReadonlySet<string> = new Set(["new", "named", "called", "titled", "entitled"]);

/**
 * Shell commands on files, as a request's first word: printing a file reads it, listing a directory lists,
 * removing deletes, moving updates, making a directory or touching a file creates.
 */
const SHELL_ACTIONS: ReadonlyMap<string, number> = new Map([
  ...["cat", "less", "more", "head", "tail"].map((c) => [c, ACTION.read] as const),
  ["ls", ACTION.list],
  ["rm", ACTION.delete],
  ["rmdir", ACTION.delete],
  ["mv", ACTION.update],
  ["mkdir", ACTION.create],
  ["touch", ACTION.create],
]);

/**
 * A request that is a shell command: the command in lower case, its flags, then a path or file name (a
 * name with a dot, a slash or a tilde) or nothing more (paths are blanked out before a query is parsed).
 * "cat pictures", "more details", "head of sales" are no command.
 */
const SHELL_COMMAND =
  /^\s*(cat|less|more|head|tail|ls|rm|rmdir|mv|mkdir|touch)(?:\s+-{1,2}[a-z]+(?:\s+\d+)?)*(?:\s+(?=[~./]|[\w-]+[./])|\s*$)/;

/**
 * "What do you know (remember) about…" in Spanish, Portuguese, French, Italian, German, Dutch and Polish:
 * "¿qué sabes de Ana?", "o que você sabe sobre…", "qu'est-ce que tu sais sur…", "cosa sai di…", "was weißt du
 * über…", "wat weet je over…", "co wiesz o…".
 */
const FOREIGN_KNOWN_ABOUT =
  /\bqu[eé]\s+(?:sabes|sab[eé]is|sabe\s+usted|recuerdas)\s+(?:de|del|sobre|acerca\s+de)\s|\bo\s+que\s+(?:(?:voc[eê]|tu)\s+)?(?:sabe|sabes|lembra|lembras)\s+(?:de|sobre|do|da|dos|das)\s|\b(?:que\s+sais[- ]tu|que\s+savez[- ]vous|qu['’]est[- ]ce\s+que\s+(?:tu\s+sais|vous\s+savez))\s+(?:de|du|des|sur)\s|\b(?:che\s+)?cosa\s+(?:sai|sapete|ricordi|ti\s+ricordi)\s+(?:di|del|della|dei|delle|su|sul|sulla)\s|\bwas\s+(?:wei(?:ß|ss)t\s+du|wissen\s+sie)\s+(?:über|ueber|von)\s|\bwat\s+(?:weet|onthoud)\s+(?:je|jij|u)\s+(?:over|van)\s|\bco\s+(?:wiesz|pamiętasz|wiecie)\s+(?:o|na\s+temat)\s/;

/**
 * A question for what is known or kept about a thing: "what do you know about Ana", "what have you got saved
 * about the berlin trip", "what do we have stored on him", and asked yes or no: "do you have anything saved
 * about kubernetes?", "do we know anything about Acme?". The thing is the search's argument.
 */
export const KNOWN_ABOUT = new RegExp(
  /\bwhat\s+(?:do|does|did|have|has)\s+(?:you|we|i)\s+(?:know|remember|have|got)(?:\s+(?:stored|saved|recorded|kept|noted|got))?\s+(?:about|on)\b|^\s*(?:do|did|have)\s+(?:you|we|i)\s+(?:have|got|know|remember)\s+(?:anything|something)(?:\s+(?:stored|saved|recorded|kept|noted|remembered))?\s+(?:about|on)\b/
    .source + "|" + FOREIGN_KNOWN_ABOUT.source,
  "i",
);

/** A request opening on a label of a new thing and a colon: "new person:", "new people:", "a new task -". */
const NEW_LABEL = /^\s*(?:a\s+)?new\s+\p{L}+(?:\s+\p{L}+)?\s*(?::|\s[-–—])\s/iu;

/** Work the agent does itself on what it has read: on a named file, a read first. */
const READS_FIRST: ReadonlySet<string> = new Set(
  "compare diff summarize summarise analyze analyse explain review proofread check".split(" ").map(stem),
);

/** The first word after a work verb and its determiners: its object. */
const WORK_OBJECT =
  /^\s*(?:please\s+)?\p{L}+\s+(?:(?:the|my|our|this|these|both|files?|me|for\s+me)\s+)*([^\s,;]+)/iu;

/** Who a thing is made for, right after "make": "make me a folder", "make us a list". */
const BENEFICIARIES: ReadonlySet<string> = new Set(["me", "us", "him", "her", "them"]);

/** A request verb that links two things also creates the link ("link Ana to Acme"). */
const REQUEST_EXTRA: ReadonlyMap<number, number> = new Map([[ACTION.link, ACTION.create]]);

let byStem: Map<string, number> | undefined;

function table(): Map<string, number> {
  if (byStem) return byStem;
  byStem = new Map();
  for (const [words, mask] of WORDS) {
    for (const w of words.split(" ")) byStem.set(stem(w), (byStem.get(stem(w)) ?? 0) | mask);
  }
  return byStem;
}

let bases: Set<string> | undefined;

/**
 * Whether a folded word is the past participle of an action verb ("stored", "saved", "memorised", "written"):
 * it says what was done to a thing ("anything stored in memory", "everything you've saved"), no imperative,
 * which takes the base form. An action word that itself ends in "ed" ("need", "embed") is no participle.
 */
export function isActionParticiple(word: string): boolean {
  bases ??= new Set(WORDS.flatMap(([words]) => words.split(" ")));
  if (bases.has(word) || !(/^\p{L}{3,}ed$/u.test(word) || word === "written")) return false;
  return actionOf(word) !== 0;
}

/** Fewest letters of a misspelt action verb read as one: shorter words are too often a name. */
const TYPO_VERB_MIN_LENGTH = 6;

/**
 * The action of a misspelt action verb ("remeber", "delte"): a word of {@link TYPO_VERB_MIN_LENGTH}+ letters
 * that is no English word and one edit (first letter kept) from an action word of the table; 0 otherwise.
 */
export function misspeltAction(word: string): number {
  if (word.length < TYPO_VERB_MIN_LENGTH || !/^[a-z]+$/.test(word) || isEnglishWord(word, stem)) return 0;
  bases ??= new Set(WORDS.flatMap(([words]) => words.split(" ")));
  for (const edit of oneEditAway(word)) {
    if (edit[0] === word[0] && bases.has(edit)) return actionOf(edit);
  }
  return 0;
}

/**
 * Whether a stem is a request's verb that names an action: an action word's, or an imperative's that tool
 * text uses otherwise ("email Sara that…", "note that…"). Putting or placing names no action by itself: where
 * the thing goes says it ("put a call on my calendar" is met by no tool that merely updates).
 */
export function isRequestVerbStem(stemmed: string): boolean {
  return isActionStem(stemmed) || (REQUEST_ONLY.has(stemmed) && !PLACING.has(stemmed));
}

/** Verbs of putting a thing somewhere ({@link isRequestVerbStem}). */
const PLACING: ReadonlySet<string> = new Set([stem("put"), stem("place")]);

/** Whether a stem is an action word's (`delet`, `list`, `creat`), or an action verb's of another language. */
export function isActionStem(stemmed: string): boolean {
  return table().has(stemmed) || foreignAction(stemmed) !== 0;
}

/** The action of the stem of a verb of another language (`legger`, from "leggere": read), 0 for none. */
function foreignAction(stemmed: string): number {
  const english = foreignVerbOfStem(stemmed);
  return english === undefined ? 0 : table().get(stem(english)) ?? 0;
}

/**
 * Verbs a tool's name or lead sentence uses for calling off what was set going ("Cancel a scheduled email",
 * `revert_commit`): they remove it. A request's "cancel" is no action word: it mostly asks off-topic things
 * ("cancel my gym membership").
 */
const TOOL_ONLY: ReadonlyMap<string, number> = new Map([
  ..."cancel abort revert undo unschedule unsubscribe rollback".split(" ").map((w) =>
    [stem(w), ACTION.delete] as const
  ),
  // "Push a text message to a user": a tool pushing sends.
  [stem("push"), ACTION.send],
]);

/** The action mask of one folded word of a tool's text: an action word's, or a cancelling verb's. */
function toolActionOf(word: string): number {
  return actionOf(word) || (TOOL_ONLY.get(stem(word)) ?? 0);
}

/**
 * The action mask of one folded word (0 when it names none); stop words name none ("not" is no "note"). A verb
 * of another language names its English verb's action ("borra", "supprimez", "löschen", "usuń": delete).
 */
function actionOf(word: string): number {
  if (STOP_WORDS.has(word) || word.length < 3) return 0;
  const own = table().get(stem(word));
  if (own !== undefined) return own;
  const english = foreignVerb(word);
  return english === undefined ? 0 : table().get(stem(english)) ?? 0;
}

/**
 * The actions a tool performs: the verb its name, title and description's lead sentence each start with
 * (`get-resource-links` gets; "links" is what it gets, not an action). Texts that start with no action word
 * add none.
 */
export function toolActions(...texts: string[]): number {
  let mask = 0;
  for (const [i, text] of texts.entries()) {
    // "Open a new tab", "start a new session": a new thing opened is made.
    if (OPENS_NEW.test(text)) {
      mask |= ACTION.create;
      continue;
    }
    // A name may put its server or product first (`todoist_create_task`, `brave_web_search`,
    // `browser_tab_list`): its first action word is its verb.
    if (i === 0) {
      const verb = splitWords(text).flatMap((w) => w.parts).find((p) => toolActionOf(p) !== 0);
      if (verb !== undefined) {
        mask |= toolActionOf(verb);
        continue;
      }
    }
    for (const w of splitWords(text)) {
      const first = w.parts.find((p) => !STOP_WORDS.has(p));
      if (first === undefined) continue;
      mask |= toolActionOf(first);
      break;
    }
    // Two verbs joined ("Get or list resources", "Create or update a file") are both the tool's.
    const joined = OR_VERB.exec(text);
    if (joined && actionOf(joined[1]!.toLowerCase()) !== 0) mask |= actionOf(joined[2]!.toLowerCase());
    // …and so are two clauses of one lead joined by "or" ("Create a new file or completely overwrite an
    // existing file"): the second verb, after an adverb at most.
    if (i === 2 && mask !== 0) {
      const second = OR_CLAUSE.exec(text);
      if (second && !/ly$/.test(second[1]!)) mask |= actionOf(second[1]!.toLowerCase());
    }
  }
  // A tool that reads and says it gives a list ("Get a list of stations", "结果是…列表") lists.
  if ((mask === 0 || mask === ACTION.read) && LIST_RESULT.test(texts[2] ?? "")) mask |= ACTION.list;
  // One that reads things by a plural name (`get_transactions`, `getJobs`, "Retrieve transactions, optionally
  // filtered…") reads many: it lists when a list is asked (`actionMatch`).
  if (mask === ACTION.read && (pluralObject(texts[0] ?? "", true) || pluralObject(texts[2] ?? "", false))) {
    mask |= ACTION.many;
  }
  // Creating or deleting a relation, link or connection is linking or unlinking: `create_relations` links.
  if (mask & (ACTION.create | ACTION.delete)) {
    const name = splitWords(texts[0] ?? "").flatMap((w) => w.parts).map(stem);
    if (name.some((s) => LINK_NOUNS.has(s))) mask |= ACTION.link;
  }
  // Adding or creating a message sends it (`conversations_add_message`, `create_message`).
  if (mask & ACTION.create) {
    const name = splitWords(texts[0] ?? "").flatMap((w) => w.parts).map(stem);
    if (name.some((s) => MESSAGE_NOUNS.has(s))) mask |= ACTION.send;
  }
  return mask;
}

/** Whether a stem names a link: a link noun ("link", "connection", "relationship") or a linking verb ("connect"). */
export function namesLink(stemmed: string): boolean {
  return LINK_NOUNS.has(stemmed) || ((table().get(stemmed) ?? 0) & ACTION.link) !== 0;
}

/** A text opening with two verbs joined by "or", "and" or "/": "Get or list…", "Create/update…". */
const OR_VERB = /^\s*(\p{L}+)\s*(?:\bor\b|\band\b|\/|,)\s*(\p{L}+)\b/iu;

/** A second clause of a lead sentence joined by "or", its verb after an adverb at most: "… or completely overwrite …". */
const OR_CLAUSE = /\bor\s+(?:\p{L}+ly\s+)?(\p{L}+)\s+(?:an?|the|existing|one|all|any)\b/iu;

/** Opening or starting a new thing makes it: "open a new tab", "start a new chat". */
const OPENS_NEW = /^\s*(?:open|start|launch|begin|spawn)\s+(?:up\s+)?(?:a\s+|an\s+)?(?:brand\s+)?new\b/i;

/**
 * Opening "a" or "an" thing that is not read where it is (a file, a page, a link…) makes it: "open a ticket",
 * "open an issue", "open a pull request"; "open the ticket" or "open a file" reads.
 */
const OPENS_ONE =
  /^open\s+(?:up\s+)?an?\s+(?!(?:file|files|url|link|page|webpage|website|site|document|doc|pdf|image|picture|photo|folder|directory|dir|browser|path)\b)/;

/**
 * What opens a stated value: a content clause ("saying…", "that Bob likes tea"; not a determiner's "that link"
 * at the end), a name ("called…"), a colon; after "remember" or "note", a clause whose "that" is left out
 * ("remember my sister Lena is allergic to peanuts").
 */
export const STATED_VALUE =
  /\b(?:saying|says|called|named|titled|entitled)\b|\bthat(?=\s+[\p{L}\p{N}'’-]+\s+[\p{L}\p{N}])|:(?=\s)|(?<=\b(?:remember|memorize|memorise|note)\s+)(?!that\b)(?=(?:[\p{L}\p{N}'’.-]+\s+){1,4}(?:is|are|was|were|has|have|had|lives|works)\b)/iu;

/** A lead sentence saying the tool's result is a list. */
const LIST_RESULT = /\b(?:a|the)\s+list\s+of\b|列表/i;

/** Plural words that name one thing's parts or figures, not many things: "details", "settings", "stats". */
const PLURAL_OF_ONE: ReadonlySet<string> = new Set(
  ("details settings stats statistics metrics analytics contents news status options preferences properties " +
    "permissions credentials info specs insights limits totals counts").split(" "),
);

/** Verbs that get things without saying how many: with a plural object they list. */
const GETTERS: ReadonlySet<string> = new Set(
  "get gets fetch fetches retrieve retrieves obtain obtains query queries".split(" "),
);

/**
 * Whether a reading tool's name ends on a plural (`get_transactions`, `getJobs`; `name`), or its lead sentence's
 * verb is followed by one ("Retrieve transactions, …", "Get all open tickets"): what it reads is many things.
 */
function pluralObject(text: string, name: boolean): boolean {
  const words = splitWords(text).flatMap((w) => w.parts);
  // Only a getter's: reading or opening many files (`read_multiple_files`, `open_nodes`) is still reading them.
  const verb = words.findIndex((w) => GETTERS.has(w));
  if (verb < 0) return false;
  if (name) {
    // The object ends where a qualifier starts: `get_station_code_by_names` reads a code.
    const object = beforeQualifier(words, verb + 1).slice(verb + 1);
    const last = object.at(-1) ?? "";
    return PLURAL.test(last) && !PLURAL_OF_ONE.has(last);
  }
  // The lead sentence: its first word the getter, a plural among the three words after it.
  if (words.findIndex((w) => !STOP_WORDS.has(w)) !== verb) return false;
  const plural = words.slice(verb + 1, verb + 4).find((w) => PLURAL.test(w));
  return plural !== undefined && !PLURAL_OF_ONE.has(plural);
}

/** What a message is called in a tool's name. */
const MESSAGE_NOUNS: ReadonlySet<string> = new Set(
  "message messages email emails mail dm".split(" ").map(stem),
);

/** What a link is called in a tool's name. */
const LINK_NOUNS: ReadonlySet<string> = new Set(
  "relation relations relationship relationships link links connection connections edge edges".split(" ").map(
    stem,
  ),
);

/**
 * Arithmetic typed in words or symbols ("17 plus 25", "2 + 2", "add 3 and 4"): a calculation, whatever its
 * verb says ("add" here creates nothing).
 */
const NUMBER_WORD = String
  .raw`(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|` +
  String
    .raw`sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand)`;

export const ARITHMETIC = new RegExp(
  // Numbers in words ("seventeen plus twenty five").
  String.raw`\b${NUMBER_WORD}(?:[\s-]+${NUMBER_WORD})*\s+(?:plus|minus|times|multiplied by|divided by)\s+` +
    String.raw`${NUMBER_WORD}\b|` +
    String
      .raw`(?<![\d.,:/-])\d+(?:\.\d+)?\s*(?:[+*×÷]|\s-\s|\bplus\b|\bminus\b|\btimes\b|\bmultiplied by\b|` +
    String.raw`\bdivided by\b)\s*\d+(?:\.\d+)?(?![\d.,:/-])|` +
    String
      .raw`\b(?:add|sum|subtract|multiply|divide)\s+(?:up\s+)?\d+(?:\.\d+)?\s+(?:and|to|by|from|with|plus)\s+\d|` +
    // The verb after its operands ("14 and 29 added together", "do 14 and 29 add up to"), or a noun before
    // them ("the sum of 3 and 4", "the product of 6 and 7").
    String.raw`(?<![\d.,:/-])\d+(?:\.\d+)?\s+and\s+\d+(?:\.\d+)?\s+(?:added|add|summed|sum|multiplied|` +
    String
      .raw`together|combined)\b|\b(?:sum|total|product|difference|quotient)\s+of\s+\d+(?:\.\d+)?\s+and\s+\d`,
  "i",
);

/** What an {@link ARITHMETIC} request implies: the terms of a calculator's or a sum's tools. */
export const ARITHMETIC_TERMS: readonly string[] = ["sum", "add", "calculate", "math"].map(stem);

/** The operators other than a sum's, each with the terms of the tools that perform it. */
const OPERATIONS: readonly [RegExp, readonly string[]][] = [
  [/[*×]|\btimes\b|\bmultipl|\bproduct\b/i, ["multiply", "multiplication", "calculate", "math"].map(stem)],
  [/÷|\bdivide|\bquotient\b/i, ["divide", "division", "calculate", "math"].map(stem)],
  [/\s-\s|\bminus\b|\bsubtract|\bdifference\b/i, ["subtract", "subtraction", "calculate", "math"].map(stem)],
];

/**
 * The terms an {@link ARITHMETIC} match implies: its operator's. A product, quotient or difference is no sum:
 * "17 × 23" looks for a calculator or a multiplying tool, never a tool returning the sum of two numbers.
 */
export function arithmeticTerms(calculation: string): readonly string[] {
  for (const [operator, terms] of OPERATIONS) if (operator.test(calculation)) return terms;
  return ARITHMETIC_TERMS;
}

/** Words that are a calculation's operator there, whatever else they name ("times" is no time). */
export const OPERATOR_WORDS: ReadonlySet<string> = new Set(["minus", "times", "multiplied", "divided"]);

/**
 * The action a request (one clause) asks for: its first content word's, when that word is an action (with
 * its particle: "look up"; after a generic verb, the next action word's too: "get the list"); 0 for none,
 * for a question ("what is…", "how big is…"), for arithmetic and for a request of over
 * {@link ACTION_MAX_WORDS} content words.
 */
export function requestAction(text: string): number {
  return requestActions(text).action;
}

/**
 * {@link requestAction}, and the actions whose words the request looks for in tools (see {@link actionTerms}):
 * none for a generic verb's own action ("show my invoices" looks for no `get`/`read` tools: it names none).
 */
export function requestActions(
  text: string,
): { action: number; recall: number; stated?: boolean; statement?: string; negated?: string } {
  const none = { action: 0, recall: 0 };
  text = aboutPhrases(text);
  // "What do you know about Ana?", "what have we got saved on Acme?": what is known of a thing, searched for.
  if (KNOWN_ABOUT.test(text)) return { action: ACTION.search, recall: ACTION.search };
  // A label for a new thing, then what it is ("new person: Lena Fischer, a designer", "new task: buy milk"):
  // a thing to create, the rest its value.
  if (NEW_LABEL.test(text)) return { action: ACTION.create, recall: ACTION.create };
  // A shell command typed as the request ("cat config.yaml", "ls ~/Downloads", "rm old.log"): its action.
  const shell = SHELL_COMMAND.exec(text);
  if (shell) {
    const action = SHELL_ACTIONS.get(shell[1]!.toLowerCase())!;
    return { action, recall: action };
  }
  // A question asks what is so, not for an action: "when was config.yaml last modified?" modifies nothing.
  if (ARITHMETIC.test(text)) return none;
  // "Don't send it after all", "never mind publishing the post": an action called off is undone, never done.
  // Calling off a removal keeps things as they are: no action to rank by; a switch is switched either way.
  const negated = negatedAction(text);
  if (negated) {
    const undone = actionOf(negated) || misspeltAction(negated);
    // Reading, searching or listing leaves nothing to undo.
    const inverse = undone & (ACTION.create | ACTION.update | ACTION.send | ACTION.run | ACTION.link) &&
        !(undone & ACTION.delete)
      ? ACTION.delete
      : undone & ACTION.toggle;
    return { action: inverse, recall: inverse, negated };
  }
  // …it reads: "who is Dana connected to?" reads a graph, it links nothing. "How do I create…" and "can
  // you…" are no such question: they ask for the verb after them, as a request does.
  if (QUESTION.test(text)) {
    const words = splitWords(text).flatMap((w) => w.parts).filter((w) => !STOP_WORDS.has(w) && w.length > 1);
    if (HOW_TO.test(text) || words.length > ACTION_MAX_WORDS) return none;
    return { action: ACTION.read | ACTION.search | ACTION.list, recall: 0 };
  }
  // "I want to save…" asks to save; "I am writing an article…" says what the user does, and asks nothing.
  // A place put first ("in src/app.ts swap…", "on the login page, click…"): the verb after it is the action.
  const place = LEADING_PLACE.exec(text);
  if (place) {
    // The first action word after one to four words of the place.
    const after = [...text.slice(place[0].length).matchAll(/[^\s,]+/g)].slice(1, 5);
    // A subject before it makes a statement ("in the morning I run").
    const subject = after.findIndex((m) => SUBJECTS.has(m[0].toLowerCase()));
    const verb = (subject < 0 ? after : after.slice(0, subject)).find((m) =>
      actionOf(m[0].toLowerCase()) !== 0
    );
    if (verb) text = text.slice(place[0].length + verb.index);
  }
  // "¿Puedes borrar…?", "Kannst du die Datei löschen?", "por favor, borra…": a request in another language put
  // politely or as a question of ability asks for its verb, wherever the language puts it (last in German and
  // Dutch): the first verb of the dictionary after it.
  const polite = FOREIGN_POLITE.exec(text);
  if (polite) {
    const rest = splitWords(text.slice(polite[0].length)).flatMap((w) => w.parts)
      .filter((w) => !STOP_WORDS.has(w) && w.length > 1 && !/\d/.test(w));
    const verb = rest.length <= ACTION_MAX_WORDS
      ? rest.find((w) => foreignVerb(w) !== undefined && actionOf(w) !== 0)
      : undefined;
    if (verb !== undefined) {
      const action = actionOf(verb);
      return { action, recall: action };
    }
  }
  const wish = WISH.exec(text);
  if (wish) text = text.slice(wish[0].length);
  else if (STATEMENT.test(text)) return laterImperative(text) ?? none;
  const all = splitWords(text).flatMap((w) => w.parts);
  const isContent = (w: string) => !STOP_WORDS.has(w) && w.length > 1 && !/\d/.test(w);
  const content = all.flatMap((w, i) => isContent(w) ? [i] : []);
  const words = content.map((i) => all[i]!);
  // A stated value ("…: login button broken on Safari", "saying 'waiting for invoice'") is given to the tool,
  // not words of the task: only the words before it count.
  const value = STATED_VALUE.exec(text);
  // Argument values typed into the request (identifiers, `KEY=value` pairs, e-mail addresses; see
  // `isValueToken`) are given to the tool, not words of the task: they do not count against the cap.
  const task = withoutArguments(text);
  const count = (t: string) => splitWords(t).flatMap((w) => w.parts).filter(isContent).length;
  const taskWords = count(task);
  const given = value && value.index > 0 ? taskWords - count(task.slice(0, value.index)) : 0;
  let capped = taskWords - given - namedObjects(text, all, content[0]) > ACTION_MAX_WORDS;
  // A task an agent types as its verb, the verb's object and a named value, then more arguments ("run AI action
  // 5kUo… with productName='Trailrunner X', plain text output, block until it's finished"): the fragments
  // after the verb's clause (to its first comma, semicolon or dash) are options of the same call; the clause
  // alone counts.
  if (capped && content[0] === 0 && actionOf(words[0]!) !== 0) {
    const end = CLAUSE_END.exec(text);
    if (end && text.slice(0, end.index).split(/\s+/).some(isNamedValue)) {
      capped = count(task.slice(0, end.index)) > ACTION_MAX_WORDS;
    }
  }
  if (capped) return none;
  const phrasal = (i: number) => {
    const from = content[i]!;
    const of = (ws: readonly string[]) =>
      PHRASAL.get(ws.slice(0, 4).join(" ")) ?? PHRASAL.get(ws.slice(0, 3).join(" ")) ??
        PHRASAL.get(ws.slice(0, 2).join(" "));
    // A pronoun object goes between a phrasal verb and its particle: "keep that in mind", "write it down".
    const moved = OBJECT_PRONOUNS.has(all[from + 1] ?? "")
      ? of([all[from]!, ...all.slice(from + 2)])
      : undefined;
    return of(all.slice(from)) ?? moved;
  };
  // The verb may be misspelt ("remeber that…"): the action word one edit away.
  const at = (i: number) =>
    phrasal(i) ?? (actionOf(words[i] ?? "") || (i === 0 ? misspeltAction(words[0] ?? "") : 0));
  // A request that opens on a participle ("anything saved about Bob?", "do I have anything stored on X")
  // asks about what was done, not to do it: it reads, searches or lists, as a question does.
  if (words.length > 0 && isActionParticiple(words[0]!)) {
    return { action: ACTION.read | ACTION.search | ACTION.list, recall: 0 };
  }
  // Returning a thing to someone or somewhere ("return a package to the post office") gives it back: no read.
  if (words[0] === "return" && GIVE_BACK.test(text)) return none;
  let mask = at(0), recall = mask;
  const opening = all.slice(content[0] ?? 0).join(" ");
  if (OPENS_NEW.test(opening) || OPENS_ONE.test(opening)) mask = recall = ACTION.create;
  // "Omar no longer reports to Priya", "Bob doesn't live in Rome anymore": with no verb first, a fact to
  // remove; between two named things, a relation ("list the packages no longer maintained" lists).
  if (mask === 0 && NO_LONGER.test(text)) {
    // An imperative after it says what to do ("…anymore. remove that connection").
    const later = laterImperative(text);
    if (later) return later;
    const named = text.match(/(?<=\S\s+)\p{Lu}\p{L}*|^\s*\p{Lu}\p{L}*/gu) ?? [];
    const ended = named.length >= 2 ? ACTION.delete | ACTION.link : ACTION.delete;
    return { action: ended, recall: ended, stated: true };
  }
  // Starting or stopping an ongoing activity ("start sending updates", "stop logging") switches it on or off.
  if (words.length > 1 && ONGOING.has(stem(words[0]!)) && /^\p{L}{3,}ing$/u.test(words[1]!)) {
    // …unless what it does is on a new or named thing ("start tracking a new project called Orion"): made.
    mask = recall = NEW_THING.test(text) ? ACTION.create : ACTION.toggle;
  }
  // Pushing, bumping or shifting a thing to a time reschedules it: "push the 1:1 to 4pm", "bump the task to
  // next Monday" (pushing code to a branch is no such thing).
  if (mask === 0 && RESCHEDULE.test(text)) mask = recall = ACTION.update;
  // Taking, pulling or kicking a thing out of another removes it from there ("take issue 55 out of the cycle").
  if (mask === 0 && OUT_OF.test(text)) mask = recall = ACTION.delete;
  // An imperative whose verb tool text uses otherwise ("note that…", "put X in…").
  if (mask === 0 && words.length > 0 && phrasal(0) === undefined) {
    mask = recall = REQUEST_ONLY.get(stem(words[0]!)) ?? 0;
    // "Make" is a light verb: "make a list" lists, "make a change" updates; it creates what it makes only
    // when that is new or named ("make a new folder", "make a folder named backups"), not a copy or a call.
    if (mask === 0 && stem(words[0]!) === MAKE) {
      const next = words.length > 1 ? at(1) : 0;
      // …or made for someone ("make me a folder", "make us a list"): a thing made to be had.
      const named = all.slice(content[0]! + 1, content[0]! + 5).some((w) => MADE.has(w)) ||
        (BENEFICIARIES.has(all[content[0]! + 1] ?? "") && /^(?:a|an|some)$/.test(all[content[0]! + 2] ?? ""));
      mask = recall = next !== 0 ? next : named ? ACTION.create : 0;
    }
  }
  // The agent's own work on a named file starts by reading it: "compare package.json and deno.json",
  // "summarize notes/meeting.md", "check config.yaml for typos".
  if (mask === 0 && words.length > 0 && READS_FIRST.has(stem(words[0]!))) {
    // The file is the verb's object, right after it ("summarize it in /root/a.pptx" writes there).
    const object = WORK_OBJECT.exec(text);
    if (object && extractLocators(object[1]!).spans.some((s) => s.path && !s.directory)) {
      mask = recall = ACTION.read;
    }
  }
  // A generic verb names the action in the word after it: "get the list of …" lists, "show me a search".
  if (mask !== 0 && phrasal(0) === undefined && GENERIC.has(stem(words[0]!))) {
    recall = 0;
    let named = false;
    for (let i = 1; i <= 3 && i < words.length; i++) {
      // A word between a determiner and a noun qualifies the noun: "show me the open disputes" reads them.
      const at_ = content[i]!;
      if (DETERMINERS.has(all[at_ - 1] ?? "") && isContentWord(all[at_ + 1] ?? "")) break;
      // A plural is the thing acted on, not a verb: "find records mentioning Berlin" searches records.
      // …nor a participle: "show me everything you've stored" shows, it stores nothing.
      const next = (PLURAL.test(words[i]!) && phrasal(i) === undefined) || isActionParticiple(words[i]!)
        ? 0
        : at(i);
      if (next !== 0) {
        mask |= next;
        recall = next;
        named = true;
        break;
      }
    }
    // Reading many things is listing them: "show me all my invoices", "get the open pull requests".
    if (!named && mask === ACTION.read && readsMany(all.slice(content[0]! + 1, content[0]! + 6))) {
      mask |= ACTION.list;
    }
  }
  // A statement, then an imperative about it ("Ana moved to Lisbon, keep that in mind", "Dave's number is
  // wrong, drop that fact"): the imperative's action, with no verb first.
  if (mask === 0) {
    const later = laterImperative(text);
    if (later) return later;
  }
  // "Ana reports to Marco.", "Tom is Lena's brother": a relation of two named things stated with no verb
  // first, to be kept (linked).
  if (mask === 0 && RELATION_STATEMENT.test(text)) {
    return { action: ACTION.create | ACTION.link, recall: ACTION.create | ACTION.link, stated: true };
  }
  const extra = (m: number) => {
    let out = 0;
    for (const [bit, add] of REQUEST_EXTRA) if (m & bit) out |= add;
    // An "un-" verb carries its own action: "unlink" deletes a link, it creates none.
    return m & ACTION.delete ? m : m | out;
  };
  // Creating or removing a relation, link or connection links or unlinks ("add that link", "remove the
  // relation"), as for a tool's name (see `toolActions`).
  if (mask & (ACTION.create | ACTION.delete) && !(mask & ACTION.link)) {
    if (words.slice(1, 4).some((w) => LINK_NOUNS.has(stem(w)))) {
      mask |= ACTION.link;
      recall |= ACTION.link;
    }
  }
  return { action: extra(mask), recall: extra(recall) };
}

/**
 * A token that is a value, not a word: an identifier mixing letters and digits (`dpl_8xK2`, `5kUoaYb3PqRs`,
 * `farmgirl22`; not `1-star`), or words joined by a colon, underscore, `=`, `@` or `#` (`api::article.article`,
 * `STRIPE_SECRET=sk_test`). A path or URL (a slash in it) is no such value: it names the file or page acted on
 * ("save it in /root/markdown/report.md").
 */
const JOINED_VALUE = /\p{L}[:_=@#]{1,4}\p{L}/u;

/** Whether a whitespace-separated token is a value given to a tool (see {@link JOINED_VALUE}). */
function isValueToken(token: string): boolean {
  if (token.includes("/") || token.includes("\\")) return false;
  if (token.length > 64 || JOINED_VALUE.test(token)) return true;
  for (const run of token.match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (/\d/.test(run) && /\p{L}/u.test(run)) return true;
  }
  return false;
}

/** Where a request's first clause ends: a comma, a semicolon or a dash between spaces. */
const CLAUSE_END = /[,;]|\s[—–-]\s/;

/** A value given by its name (`productName='X'`, `KEY=value`, `api::article.article`, an address; no path). */
function isNamedValue(token: string): boolean {
  return !token.includes("/") && /\p{L}[:_=@#]{1,4}["']?[\p{L}\p{N}]/u.test(token);
}

/** A request's text with its argument values blanked (same length, so indices keep their place). */
export function withoutArguments(text: string): string {
  return text.replace(/\S+/g, (m) => isValueToken(m) ? " ".repeat(m.length) : m);
}

/**
 * Most content words of a request (one clause) whose first verb is its action: a short imperative names the
 * one thing it wants ("forget the entity Bob"); a longer request describes a task whose parts need other
 * actions too ("write a tutorial for Ant Design…" reads the docs first). Chosen among 6, 8 and 12 on the
 * LiveMCPBench tuning half (12: −0.017 R@5 there; 6: a host-name set −0.05 nDCG@5).
 */
export const ACTION_MAX_WORDS = 8;

/**
 * A wish that opens a request: the action is the verb after it ("I'd like to save…", "we need to find…", "I'd
 * like you to remember both of them").
 */
const WISH =
  /^\s*(?:please\s+)?(?:i|we)(?:\s+(?:really|just|also))?\s*(?:'d|’d|\s+would)?\s*(?:want|need|like|wish|have|hope|plan)\s+(?:you\s+)?to\s+/i;

/**
 * A request's polite opening or question of ability in Spanish, Portuguese, French, Italian, German, Dutch or
 * Polish: "por favor", "¿puedes…", "pouvez-vous…", "potresti…", "kannst du…", "kun je…", "możesz…".
 */
const FOREIGN_POLITE =
  /^\s*¿?\s*(?:(?:por\s+favor|per\s+favore|s['’]il\s+(?:te|vous)\s+pla[iî]t|bitte|alsjeblieft|alstublieft|proszę)[\s,]+)?(?:(?:me\s+|mi\s+|nos\s+)?(?:puedes|podr[ií]as|puede|podr[ií]a|podes|pode|podia|podias|peux[- ]tu|pouvez[- ]vous|pourrais[- ]tu|pourriez[- ]vous|puoi|pu[oò]|potresti|potrebbe)|kannst\s+du|k[öo]nntest\s+du|k[öo]nnen\s+sie|k[öo]nnten\s+sie|kun\s+je|kunt\s+u|kan\s+je|zou\s+je|czy\s+mo[żz]esz|mo[żz]esz|mo[żz]ecie)\s+|^\s*(?:por\s+favor|per\s+favore|s['’]il\s+(?:te|vous)\s+pla[iî]t|bitte|alsjeblieft|alstublieft|proszę)[\s,]+/i;

/** A statement with a first-person subject ("I am writing…", "we have three…", "my son…"): no imperative. */
const STATEMENT = /^\s*(?:i|i'm|i’m|im|we|we're|we’re|my|our)\b/i;

/** A thing taken, pulled or kicked out of another: a removal from it (the object between verb and particle). */
const OUT_OF = /^\s*(?:please\s+)?(?:take|pull|kick|get)\s+(?:[^\s,]+\s+){1,5}?out\s+of\b/i;

/** Pushing, bumping or shifting a thing to (or back to, out to) a time: a reschedule. */
const RESCHEDULE = new RegExp(
  String
    .raw`^\s*(?:please\s+)?(?:push|bump|shift|slide)\b.{0,60}?\b(?:back|out|forward)?\s*(?:to|until|till)\s+` +
    String
      .raw`(?:(?:next|this|the)\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|noon|` +
    String
      .raw`midnight|later|week|month|morning|afternoon|evening|\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\d{1,2}:\d{2})`,
  "i",
);

/** A question asking how to do something: it asks for that action, not for a fact. */
const HOW_TO =
  /^\s*(?:how|what|where|when|which|why)\b(?:\s+\w+)?\s+(?:do|does|can|could|should|would|to)\b/i;

/** Phrases that mean "about": "anything related to Apollo" relates nothing. */
const ABOUT = /\b(?:related|relating|pertaining|with regard|in regard|in relation)\s+to\b/gi;

/** `text` with each phrase meaning "about" ("related to", "relating to", "in relation to") said as "about". */
export function aboutPhrases(text: string): string {
  return text.replace(ABOUT, "about");
}

/**
 * An action verb called off: "don't", "do not", "never mind", "no longer want to" (or "… after all") before
 * it. The request asks for the cancelling action (cancel, delete, undo, unschedule), never the verb's own.
 */
const NEGATION = new RegExp(
  String.raw`(?:^|[,;:.!?]\s*|\s[-–—]+\s*|\b(?:so|actually|oh|wait|no|ok|okay)\s+)` +
    String.raw`(?:(?:please|just|actually|so)\s+)*(?:(?:i|we)\s+)?(?:` +
    String
      .raw`(?:don[’']?t|do\s+not|no\s+longer)(?:\s+(?:want|need|wish)\s+(?:you\s+)?to)?(?:\s+(?:bother|go\s+ahead))?` +
    String
      .raw`(?:\s+(?:to|and))?|never\s*mind(?:\s+(?:about|the|that|my|our))?|no\s+need\s+(?:for\s+you\s+)?to|` +
    String.raw`(?:(?:i|we)\s+)?(?:won[’']?t|will\s+not)\s+(?:need|want)\s+(?:you\s+)?to)\s+(\p{L}+)`,
  "iu",
);

/**
 * The action verb a request calls off ("that email I scheduled — dont send it after all" → "send"), when the
 * negation opens the request or a clause with no action verb before it: a constraint after an imperative
 * ("copy a.txt but don't overwrite b.txt") calls off nothing.
 */
const FORGET = stem("forget");

/** The action mask of the verb a request calls off ({@link negatedAction}); 0 for none. */
export function calledOff(text: string): number {
  const verb = negatedAction(aboutPhrases(text));
  return verb === undefined ? 0 : actionOf(verb) || misspeltAction(verb);
}

export function negatedAction(text: string): string | undefined {
  const m = NEGATION.exec(text);
  if (!m) return undefined;
  const verb = m[1]!.toLowerCase();
  // "Don't forget to…" asks to remember: the idiom does what it names.
  if (stem(verb) === FORGET || (actionOf(verb) === 0 && misspeltAction(verb) === 0)) return undefined;
  const before = splitWords(text.slice(0, m.index)).flatMap((w) => w.parts);
  if (before.some((w) => actionOf(w) !== 0 && !isActionParticiple(w))) return undefined;
  return verb;
}

/** A state said to have ended: "no longer", "not … anymore", "isn't … any more" ("doesnt" as typed too). */
const NO_LONGER =
  /\bno longer\b|\b(?:not|\w+n[’']t|(?:does|do|did|is|are|was|were|has|have|had)nt)\b[^.;!?]{0,40}\bany ?more\b/i;

/**
 * A statement relating two named things, with no verb first: a name, a verb of relation or "is", and a second
 * name ("Ana reports to Marco", "Tom is Lena's brother", "Alice manages Bob"), the whole request or its first
 * sentence.
 */
const RELATION_STATEMENT =
  /^\s*(?:(?:[Oo]h|[Aa]nd|[Aa]lso|[Bb]tw|BTW|[Ff]yi|FYI|[Pp]lus|[Bb]y the way)[,:]?\s+)*\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?\s+(?:(?:reports|belongs|answers|is\s+married|is\s+engaged|is\s+related)\s+to|works\s+(?:for|at|with)|depends\s+on|manages|mentors|supervises|(?:is|was)\s+(?=\p{Lu}\p{Ll}+['’]s\s))\s*\p{Lu}\p{Ll}+/u;

/**
 * Whether a statement says a relation of two named things or a state that ended ("alice doesnt manage bob
 * anymore"): a fact an imperative after it, even in a sentence of its own, acts on.
 */
export function keepsOrEnds(statement: string): boolean {
  return RELATION_STATEMENT.test(statement) || NO_LONGER.test(statement);
}

/** Whether a request states a relation of two named things with no verb first ({@link RELATION_STATEMENT}). */
export function statesRelation(text: string): boolean {
  return RELATION_STATEMENT.test(text);
}

/** "Don't forget" (it, that…): remember it. */
const DONT_FORGET = /^\s*(?:please\s+)?(?:don[’']?t|do\s+not)\s+forget\b/i;

/** Where a later clause of a request may start: a comma, a statement's full stop, a dash, "so", "and", "but". */
const LATER_CLAUSE = /[,;:.!]\s+|\s[-–—]\s|\s(?:so|and|but)\s/gi;

/** An imperative whose object points back at what was said before: "keep that…", "drop that fact", "note it". */
const BACK_IMPERATIVE =
  /^\s*(?:(?:please|now|just|so)\s+)*(?:can|could|would|will)?\s*(?:you\s+)?(?:please\s+)?\p{L}+\s+(?:(?:just|only|also)\s+)?(?:it|that|this|them|these|those|both|the two|him|her)\b/iu;

/** Whether a clause is an imperative about what was said before it ("keep that in mind", "drop that fact"). */
export function pointsBack(clause: string): boolean {
  return BACK_IMPERATIVE.test(clause) && requestAction(clause) !== 0;
}

/**
 * The action of a later clause of a request that opens with a statement, when that clause is an imperative
 * about the statement ("…, keep that in mind", "…, so remove that link", "…, please connect the two").
 */
function laterImperative(
  text: string,
): { action: number; recall: number; stated: boolean; statement: string } | undefined {
  for (const m of text.matchAll(LATER_CLAUSE)) {
    // "Don't forget it" keeps what was said: "remember it".
    const piece = text.slice(m.index + m[0].length).replace(DONT_FORGET, "remember");
    // Across a full stop only after a fact to keep or undo: a relation, a state that ended, or a fact the
    // user asks not to be forgotten.
    if (/^[.!]/.test(m[0]) && !keepsOrEnds(text.slice(0, m.index)) && !/^remember\b/.test(piece)) continue;
    if (!BACK_IMPERATIVE.test(piece)) continue;
    const asked = requestActions(
      piece.replace(/^\s*(?:(?:please|now|just|so)\s+)*(?:can|could|would|will)?\s*(?:you\s+)?/i, ""),
    );
    if (asked.action !== 0) {
      return { action: asked.action, recall: asked.recall, stated: true, statement: text.slice(0, m.index) };
    }
  }
  return undefined;
}

/** A request opening with where it applies, one to four words long, then its verb ("in config.yaml change…"). */
/** Subject pronouns: a clause with one is a statement, not an imperative. */
const SUBJECTS: ReadonlySet<string> = new Set("i we you he she they it".split(" "));

const LEADING_PLACE = /^\s*(?:in|on|inside|within|at|from|under)\s+/i;

/** Object pronouns, which English puts between a phrasal verb and its particle ("look it up"). */
const OBJECT_PRONOUNS: ReadonlySet<string> = new Set("it that this them these those him her".split(" "));

/** A request that opens with a question word. */
export const QUESTION =
  /^\s*(?:what|what's|whats|when|where|who|whom|whose|which|why|how|(?:did|do|does)\s+(?:i|we|you|they|he|she|it|anyone|anybody|someone|somebody)\b)\b/i;

/** Words that open a noun phrase: a word after one, with a noun after it, is an adjective ("the open disputes"). */
const DETERMINERS: ReadonlySet<string> = new Set(
  "the a an my our your his her their this that these those all any every some each no".split(" "),
);

/** Whether a split word is a content word (no stop word, two letters or more, no digit). */
function isContentWord(w: string): boolean {
  return !STOP_WORDS.has(w) && w.length > 1 && !/\d/.test(w);
}

/** A plural noun: "records", "entries", "boxes" (not "address", "status", "analysis"). */
const PLURAL = /^\p{L}{2,}[^su\s]s$|^\p{L}{2,}ies$/u;

/** Words before a thing that say there are many of it. */
const MANY: ReadonlySet<string> = new Set(["all", "every", "each", "my", "our", "the"]);

/**
 * Whether the words after a generic reading verb ask for many things: "all", "every", or a plural right
 * after a determiner ("my invoices", "the pods"), so a tool that lists them does what is asked.
 */
function readsMany(after: readonly string[]): boolean {
  if (after.some((w) => w === "all" || w === "every" || w === "each")) return true;
  for (let i = 0; i + 1 < after.length; i++) {
    // …with a word qualifying the plural between them: "the open disputes", "my unread emails".
    if (MANY.has(after[i]!) && (PLURAL.test(after[i + 1]!) || PLURAL.test(after[i + 2] ?? ""))) return true;
  }
  return false;
}

/** Verbs that say little of the action on their own ("get the list", "show the search results"). */
const GENERIC: ReadonlySet<string> = new Set("get show find fetch give see look".split(" ").map(stem));

/**
 * How many words of the names right after a request's verb there are ("add Maria Lopez and Tom Becker as…"):
 * its object is those named things, arguments that make the request no longer a task description.
 */
function namedObjects(text: string, all: readonly string[], verb: number | undefined): number {
  if (verb === undefined) return 0;
  const names = new Set(
    [...text.matchAll(/(?<=[\p{L}\p{N},;)]\s+)\p{Lu}[\p{L}\p{N}]*/gu)].map((m) => m[0].toLowerCase()),
  );
  let n = 0;
  for (let i = verb + 1; i < all.length; i++) {
    if (names.has(all[i]!)) n++;
    else if (all[i] !== "and") break;
  }
  return n;
}

/** Whether a stemmed word is a verb that says little of the action on its own (a tool named `show`). */
export function isGenericVerb(stemmed: string): boolean {
  return GENERIC.has(stemmed);
}

/**
 * Words a request's action also looks for in tools, at a synonym's weight (recall only: never the name
 * bonus): "remember" finds `create`/`add` tools, "forget" `delete`/`remove` ones, "link" `relation` ones.
 */
const RECALL: readonly [number, string][] = [
  [ACTION.create, "create add store insert record"],
  [ACTION.read, "read get open show view fetch retrieve"],
  [ACTION.update, "update edit modify change rename move replace"],
  [ACTION.delete, "delete remove"],
  [ACTION.search, "search find query lookup"],
  [ACTION.list, "list"],
  [ACTION.link, "link relation connect"],
  [ACTION.send, "send"],
  [ACTION.run, "run execute trigger start"],
  [ACTION.toggle, "toggle enable disable mute"],
];

/** The stems a request's action mask looks for (see {@link RECALL}). */
export function actionTerms(mask: number): string[] {
  const out = new Set<string>();
  for (const [bit, words] of RECALL) if (mask & bit) { for (const w of words.split(" ")) out.add(stem(w)); }
  return [...out];
}

/** Share of the request's actions the tool performs, or -1 when it performs only others; 0 when either has none. */
export function actionMatch(request: number, tool: number): number {
  if (request === 0 || tool === 0) return 0;
  // A tool reading many things lists them when a list is all that is asked (not for a question, which asks
  // to read, search or list: there it reads).
  const does = (tool & ACTION.many) && request === ACTION.list ? tool | ACTION.list : tool & ~ACTION.many;
  const both = request & does;
  if (both === 0) return -1;
  return bits(both) / bits(request);
}

function bits(mask: number): number {
  let n = 0;
  for (let m = mask; m; m &= m - 1) n++;
  return n;
}

/** A description that says the tool is deprecated or replaced ("DEPRECATED: use read_text_file instead"). */
export const DEPRECATED =
  /\bdeprecated\b|\bobsolete\b|\bno longer (?:supported|maintained|recommended)\b|\bsuperseded by\b|\blegacy\b[^.]{0,40}\buse\b|\buse [\w.-]+ instead\b/i;

/**
 * A tool's lead sentence saying it adds to things that exist already ("Add observations to existing
 * entities"); not one that makes a new thing or replaces an existing one ("create or overwrite an existing file").
 */
export const EXISTING = /\b(?:to|into|onto)\s+(?:an?\s+|the\s+)?(?:already\s+)?existing\b/i;

/** A verb making a new thing, whatever comes before it ("knowledge graph: add new entity"). */
const MAKE_NEW = /\b(?:add|create|make|insert|register|store|save|record)\s+new\b/i;

/**
 * "A new X", a verb making a new X with no article ("add new entity", as an agent types), or a thing named:
 * "save a new person", "a contact named Omar" (not "Ana's new phone number").
 */
const NEW_THING = new RegExp(
  String.raw`\b(?:a|an|some|as)\s+new\b|\b(?:named|called|titled|entitled)\b|` + MAKE_NEW.source,
  "i",
);

/** A request naming what it adds to: "to the project", "to my list", "to issue 5". */
const EXISTING_TARGET =
  /\b(?:to|into|onto)\s+(?:(?:the|an?|my|our|this|that|its|his|her|their|existing)\b|(?:[\p{L}-]+\s+)?#?\d)/iu;

/** A request naming a named thing it adds to: "to Bob", "into Acme" (a capital, matched case-sensitively). */
const EXISTING_NAME = /\b(?:to|into|onto)\s+\p{Lu}/u;

/**
 * A request to create a new or named thing ("save a new person called Carlos", "store a contact named Omar"):
 * a tool that only adds to existing things does not do it.
 */
export function asksForNew(text: string): boolean {
  return ((requestAction(text) & ACTION.create) !== 0 && (NEW_THING.test(text) || NEW_LABEL.test(text)) ||
    MAKE_NEW.test(text)) && !EXISTING_TARGET.test(text) && !EXISTING_NAME.test(text);
}

/**
 * The words an agent puts around a task when it asks a tool search for a tool: "find a tool that reads file
 * contents", "tool to list a directory", "is there a function for converting PDFs", "search tools: memory
 * graph delete relation", "use a tool to get the current time". A tool, function or capability followed by
 * what it should do ("that", "which", "to", "for", "can", a colon…) names no task of its own: its words and
 * the verb that seeks it ("find", "search for", "use") are the search's, not the tool's, and the task is what
 * follows. A tool named without such a connector ("list tools", "the BI tool") stays as typed.
 */
const TOOL_FRAME = new RegExp(
  String.raw`(^|[.!?;\n]\s*)(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?` +
    String.raw`(?:(?:find|search(?:\s+for)?|look\s+(?:for|up)|locate|get|give|show|suggest|recommend|need|` +
    String.raw`want|use|call|pick|choose|is\s+there|are\s+there|do\s+you\s+have|which|what|` +
    String
      .raw`(?:i|we)\s+(?:need|want|am\s+looking\s+for|are\s+looking\s+for)|(?:i'm|we're|im)\s+looking\s+for|` +
    String.raw`looking\s+for)\s+(?:me\s+)?)?(?:(?:a|an|the|any|some|one)\s+)?` +
    String.raw`(?:(?:good|suitable|relevant|right|appropriate|available|mcp|single|specific)\s+)*` +
    String.raw`(?:tools?|functions?|capabilit(?:y|ies))` +
    String
      .raw`(?:\s*:|(?:\s+(?:that|which|to|for|can|could|able\s+to|capable\s+of|(?:i|we)\s+(?:can|could|should)\s+` +
    String
      .raw`use\s+to|(?:do|should|can|could)\s+(?:i|we)\s+use\s+(?:to|for)|is\s+able\s+to|lets\s+(?:me|us)|` +
    String.raw`allows\s+(?:me|us)\s+to|would|will|should|is\s+used\s+(?:to|for)))+)\s+`,
  "gi",
);

/** "The user wants to …", "the user asked me to …": an agent passing on its user's wish; the task follows. */
const USER_WISH =
  /(^|[.!?;\n]\s*)(?:the\s+)?user\s+(?:wants|needs|would\s+like|asked(?:\s+me)?|is\s+asking(?:\s+me)?|has\s+asked(?:\s+me)?)\s+to\s+/gi;

/** `text` without the words an agent puts around a task when it searches for a tool ({@link TOOL_FRAME}). */
export function withoutToolFrame(text: string): string {
  if (!/\b(?:tools?|functions?|capabilit(?:y|ies)|user)\b/i.test(text)) return text;
  return text.replace(TOOL_FRAME, "$1").replace(USER_WISH, "$1");
}

/** One to four words naming an instrument; a pronoun ("use it to…") names none. */
const INSTRUMENT_WORDS =
  String.raw`(?:the\s+|my\s+|our\s+)?(?!(?:it|them|this|that|these|those|me|us|him|her|one)\b)` +
  String.raw`[^\s,.:;!?]+(?:\s+[^\s,.:;!?]+){0,3}?`;

/**
 * The instrument named before the task: "use github to open an issue…", "using slack, post…", "call the
 * linear API to list my issues", "via gmail send…". The task after it opens the request (its verb is the
 * action asked), and the instrument, which picks the server, follows it: "open an issue… (github)". One to
 * four words of instrument, then "to", a comma or a colon; "use the calculator" (no task after it) stays.
 */
const INSTRUMENT = new RegExp(
  String
    .raw`(^|[.!?;\n]\s*)(?:please\s+)?(?:(?:use|using|via|through)\s+(${INSTRUMENT_WORDS})\s*(?:,|:|\s+to\s+(?=\w))|` +
    // "Call it 'Full Body B':" names a thing: a call is an instrument only before "to" ("call the API to…").
    String.raw`(?:call|calling)\s+(${INSTRUMENT_WORDS})\s+to\s+(?=\w))\s*`,
  "gi",
);

/** `text` with an instrument named before its task ({@link INSTRUMENT}) put after the task. */
export function instrumentLast(text: string): string {
  if (!/\b(?:use|using|call|calling|via|through)\b/i.test(text)) return text;
  const found = [...text.matchAll(INSTRUMENT)];
  if (found.length === 0) return text;
  let out = "", from = 0;
  for (const [i, m] of found.entries()) {
    const end = found[i + 1]?.index ?? text.length;
    // The task runs to the end of its sentence; the instrument goes after it, before the sentence's stop.
    const rest = text.slice(m.index! + m[0].length, end);
    const stop = /[.!?;\n](?:\s|$)/.exec(rest)?.index ?? rest.length;
    out += text.slice(from, m.index!) + m[1] + rest.slice(0, stop) + ` (${m[2] ?? m[3]})` + rest.slice(stop);
    from = end;
  }
  return out + text.slice(from);
}

/**
 * A thing named by its identifier: a noun and a number or key holding two or more digits ("ticket 51877",
 * "order #8812", "issue ENG-77", "document no. 142"); not a file name ("tag meeting-0412.md").
 */
const INSTANCE =
  /(?<!\p{L})(\p{L}{3,30})\s+(?:(?:no\.?|number|id)\s+)?#?(?=(?:[\p{L}_-]{0,40}\d){2})([\p{L}\d_-]{2,40})(?![\p{L}\d_-]|\.\p{L})/giu;

/** A place under or inside a thing, where a new one of its kind may go ("under her comment c-991"). */
const PARENT = /\b(?:under|beneath|below|inside|within)\s+(?:\p{L}+\s+)?$/iu;

/**
 * The stems of the things a request names by their identifier, each the only use of its noun ("on ticket
 * 51877 let the customer know…": `ticket`): that one exists, so the request makes no new one of its kind.
 * A noun the request also uses apart ("3 blank rows above row 10") is a position, not the thing acted on.
 */
export function namedInstances(text: string): Set<string> {
  const out = new Set<string>();
  const counts = new Map<string, number>();
  for (const w of splitWords(text)) {
    for (const p of w.parts) counts.set(stem(p), (counts.get(stem(p)) ?? 0) + 1);
  }
  for (const m of text.matchAll(INSTANCE)) {
    const noun = m[1]!.toLowerCase();
    if (STOP_WORDS.has(noun) || PARENT.test(text.slice(Math.max(0, m.index - 40), m.index))) continue;
    const s = stem(noun);
    if ((counts.get(s) ?? 0) === 1) out.add(s);
  }
  return out;
}
