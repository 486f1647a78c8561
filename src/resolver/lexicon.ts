/**
 * General lexical knowledge for ranking: related words derived from WordNet (generated into
 * `lexicon_data.ts` by `scripts/gen_lexicon.ts`), stop words of other languages, and Romance
 * cognates (`repositorio` -> `repository`, `editar` -> `edit`, `creación` -> `creation`), so a
 * query in Spanish, Portuguese, French or Italian reaches English tool text.
 *
 * @module
 */
import { isEnglishStem } from "./english.ts";
import { foreignWord } from "./foreign_words.ts";
import { FOREIGN_STOP_WORDS, RELATED } from "./lexicon_data.ts";
import { stem } from "./tokenize.ts";

export { isEnglishStem };

/** Words whose stems make the stemmer fingerprint: a change to the stemmer changes it. */
const FINGERPRINT_WORDS =
  "create creates creating created creation creator running files directories queries visualization " +
  "summarise organised analyses indices processing addresses stories repositories searched getting";

/** A short hash of the stems of a fixed word list; the generated data records the one it was made with. */
export function stemmerFingerprint(): string {
  let h = 2166136261;
  for (const ch of FINGERPRINT_WORDS.split(" ").map(stem).join(" ")) {
    h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/**
 * Particles of the phrasal verbs kept from WordNet ("add up", "look up", "shut down"): the lexicon has
 * a key `add_up` (verb stem, `_`, particle) with the phrase's single-word synonyms.
 */
export const PARTICLES: readonly string[] = ["up", "down", "out", "off", "in", "on", "over", "back", "away"];

/** The lexicon key of a phrasal verb (`add`, `up` -> `add_up`); look it up with {@link relatedTerms}. */
export function phrasalKey(verbStem: string, particle: string): string {
  return `${verbStem}_${particle}`;
}

/** A WordNet relation: same-sense synonym or near-synonym (verb group, derivation, verb hypernym). */
export interface Relation {
  term: string;
  synonym: boolean;
}

let related: Map<string, Relation[]> | undefined;

/** WordNet-derived related stems of a stem (empty when none). Parsed on first use. */
export function relatedTerms(term: string): readonly Relation[] {
  if (!related) {
    related = new Map();
    for (const line of RELATED.split("\n")) {
      const [key, ...rest] = line.split(" ");
      related.set(
        key!,
        rest.map((
          t,
        ) => (t.endsWith("*") ? { term: t.slice(0, -1), synonym: true } : { term: t, synonym: false })),
      );
    }
  }
  return related.get(term) ?? [];
}

/**
 * True for an English word: its stem is a WordNet lemma's ({@link isEnglishStem}), or it is the comparative or
 * superlative of one, which WordNet does not list ("newest", "bigger", "easiest").
 */
export function isEnglishWord(word: string, stemOf: (word: string) => string): boolean {
  if (isEnglishStem(stemOf(word))) return true;
  const grade = /^(.{2,}?)(?:(.)\2)?(i)?(?:est|er)$/.exec(word);
  if (!grade) return false;
  const base = grade[1]! + (grade[2] ?? "") + (grade[3] ? "y" : "");
  return [base, grade[1]! + (grade[2] ?? ""), base + "e"].some((b) => isEnglishStem(stemOf(b)));
}

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** Every string one edit (delete, swap of neighbours, replace, insert) away from a lowercase word. */
export function oneEditAway(word: string): string[] {
  const out: string[] = [];
  for (let i = 0; i <= word.length; i++) {
    const [head, tail] = [word.slice(0, i), word.slice(i)];
    if (tail) out.push(head + tail.slice(1));
    if (tail.length > 1) out.push(head + tail[1] + tail[0] + tail.slice(2));
    for (const c of LETTERS) {
      if (tail && c !== tail[0]) out.push(head + c + tail.slice(1));
      out.push(head + c + tail);
    }
  }
  return out;
}

let foreignStops: Set<string> | undefined;

/**
 * True for a stop word of another language that is not also an English content word (folded input). A
 * word the Romance dictionary below translates is a content word (`hora`: time), whatever a stop list says.
 */
export function isForeignStopWord(word: string): boolean {
  foreignStops ??= new Set(FOREIGN_STOP_WORDS.split(" "));
  return foreignStops.has(word) && !Object.hasOwn(ROMANCE, word);
}

/**
 * Common Romance words for tool actions and objects that are not cognates of their English
 * equivalent (es, pt, fr, it), folded. General vocabulary, not taken from any benchmark task.
 */
const ROMANCE: Readonly<Record<string, string>> = {
  // read
  leer: "read",
  ler: "read",
  lire: "read",
  leggere: "read",
  lee: "read",
  lea: "read",
  leggi: "read",
  // write
  escribir: "write",
  escrever: "write",
  ecrire: "write",
  scrivere: "write",
  guardar: "save",
  salvar: "save",
  enregistrer: "save",
  sauvegarder: "save",
  salvare: "save",
  // search, find
  buscar: "search",
  procurar: "search",
  chercher: "search",
  rechercher: "search",
  cercare: "search",
  cerca: "search",
  busca: "search",
  encontrar: "find",
  trouver: "find",
  trovare: "find",
  hallar: "find",
  // delete
  borrar: "delete",
  apagar: "delete",
  supprimer: "delete",
  eliminar: "delete",
  cancellare: "delete",
  // show, get, send, make
  mostrar: "show",
  afficher: "show",
  mostrare: "show",
  obtener: "get",
  obter: "get",
  obtenir: "get",
  ottenere: "get",
  enviar: "send",
  envoyer: "send",
  inviare: "send",
  hacer: "make",
  fazer: "make",
  faire: "make",
  fare: "make",
  sumar: "add",
  somar: "add",
  ajouter: "add",
  aggiungere: "add",
  anadir: "add",
  adicionar: "add",
  cambiar: "change",
  mudar: "change",
  changer: "change",
  cambiare: "change",
  abrir: "open",
  ouvrir: "open",
  aprire: "open",
  descargar: "download",
  baixar: "download",
  telecharger: "download",
  scaricare: "download",
  subir: "upload",
  fusionar: "merge",
  mesclar: "merge",
  nuevo: "new",
  nueva: "new",
  novo: "new",
  nova: "new",
  nouveau: "new",
  nouvelle: "new",
  nuovo: "new",
  nuova: "new",
  // things
  archivo: "file",
  arquivo: "file",
  fichier: "file",
  fichero: "file",
  carpeta: "folder",
  pasta: "folder",
  dossier: "folder",
  cartella: "folder",
  hora: "time",
  heure: "time",
  ora: "time",
  tiempo: "time",
  tempo: "time",
  temps: "time",
  pagina: "page",
  page: "page",
  correo: "mail",
  courriel: "mail",
  rama: "branch",
  ramo: "branch",
  branche: "branch",
  arbol: "tree",
  arvore: "tree",
  arbre: "tree",
  albero: "tree",
  arborescence: "tree",
  repertoire: "directory",
  linea: "line",
  linha: "line",
  ligne: "line",
  riga: "line",
  enlace: "link",
  lien: "link",
  collegamento: "link",
  mapa: "map",
  carte: "map",
  direccion: "address",
  endereco: "address",
  adresse: "address",
  indirizzo: "address",
  tabla: "table",
  tabela: "table",
  tableau: "table",
  tabella: "table",
  imagen: "image",
  imagem: "image",
  immagine: "image",
  clima: "weather",
  meteo: "weather",
  noticias: "news",
  noticia: "news",
  nouvelles: "news",
  notizie: "news",
  precio: "price",
  preco: "price",
  prix: "price",
  prezzo: "price",
  semana: "week",
  nombre: "name",
  nome: "name",
  nom: "name",
  fecha: "date",
  usuario: "user",
  utilisateur: "user",
  utente: "user",
  memoria: "memory",
  memoire: "memory",
  entidad: "entity",
  entidade: "entity",
  entite: "entity",
  entita: "entity",
  comentario: "comment",
  commentaire: "comment",
  commento: "comment",
  revision: "review",
  revisao: "review",
  revisione: "review",
  registro: "log",
  historial: "history",
  historico: "history",
  historique: "history",
  cronologia: "history",
  numeros: "number",
  numero: "number",
  nombres: "number",
  somma: "sum",
  suma: "sum",
  soma: "sum",
  somme: "sum",
  coordenadas: "coordinates",
  coordonnees: "coordinates",
  coordinate: "coordinates",
  incidencia: "issue",
  problema: "issue",
  probleme: "issue",
  cambios: "change",
  cambio: "change",
  mudancas: "change",
  modifiche: "change",
  fuso: "timezone",
  huso: "timezone",
  fuseau: "timezone",
};

/**
 * Romance suffixes and their English counterparts, longest first. Applied to a folded word with no
 * match in the catalog; each candidate is only used when the catalog knows its stem.
 */
const SUFFIXES: readonly [string, string][] = [
  ["izaciones", "ization"],
  ["izacion", "ization"],
  ["izacao", "ization"],
  ["izzazione", "ization"],
  ["isation", "ization"],
  // Portuguese and Spanish drop the c of -ction (direção, dirección -> direction): tried before -tion.
  ["ecoes", "ections"],
  ["ecao", "ection"],
  ["acoes", "actions"],
  ["acao", "action"],
  ["ciones", "tion"],
  ["cion", "tion"],
  ["coes", "tion"],
  ["cao", "tion"],
  ["zioni", "tion"],
  ["zione", "tion"],
  ["sion", "sion"],
  ["dades", "ty"],
  ["dad", "ty"],
  ["dade", "ty"],
  ["ita", "ity"],
  ["ite", "ity"],
  ["mente", "ly"],
  ["ificar", "ify"],
  ["ificare", "ify"],
  ["ifier", "ify"],
  ["izar", "ize"],
  ["izzare", "ize"],
  ["iser", "ize"],
  ["orio", "ory"],
  ["oria", "ory"],
  ["oire", "ory"],
  ["ario", "ary"],
  ["aria", "ary"],
  ["aire", "ary"],
  ["ico", "ic"],
  ["ica", "ic"],
  ["ique", "ic"],
  ["icos", "ics"],
  ["icas", "ics"],
  ["iques", "ics"],
  ["ivo", "ive"],
  ["iva", "ive"],
  ["oso", "ous"],
  ["osa", "ous"],
  ["eux", "ous"],
  ["encia", "ence"],
  ["ancia", "ance"],
  ["enza", "ence"],
  ["anza", "ance"],
  ["ista", "ist"],
  ["iste", "ist"],
  ["ismo", "ism"],
  ["isme", "ism"],
  ["ura", "ure"],
  ["ia", "y"],
  ["ie", "y"],
  ["mento", "ment"],
  ["miento", "ment"],
  ["ment", "ment"],
  ["aje", "age"],
  ["agem", "age"],
  ["aggio", "age"],
  ["ables", "able"],
  ["ibles", "ible"],
  // infinitives and plural / gender endings, stripped
  ["ar", ""],
  ["er", ""],
  ["ir", ""],
  ["are", ""],
  ["ere", ""],
  ["ire", ""],
  ["re", ""],
  ["os", ""],
  ["as", ""],
  ["es", ""],
  ["o", ""],
  ["a", ""],
  ["e", ""],
  ["i", ""],
  ["s", ""],
]; // deno-fmt-ignore

/**
 * English candidates for a folded non-English word: the dictionary entry, then suffix-mapped forms
 * (`repositorio` -> `repository`, `creacion` -> `creation`, `editar` -> `edit`, `planificar` -> `planify`,
 * `plan`). At most a handful; the caller keeps those whose stem the catalog knows.
 */
export function cognates(word: string): string[] {
  const out: string[] = [];
  const known = ROMANCE[word] ?? ROMANCE[word.replace(/e?s$/, "")] ?? foreignWord(word);
  if (known) out.push(known);
  if (word.length < 4 || !/^[a-z]+$/.test(word)) return out;
  for (const [from, to] of SUFFIXES) {
    if (word.length - from.length < 3 || !word.endsWith(from)) continue;
    const base = word.slice(0, word.length - from.length);
    out.push(base + to);
    if (to === "ify") out.push(base);
    if (out.length >= 6) break;
  }
  return out;
}
