/**
 * The fifteenth ranking pass, part E (issue #42, changes 440–459): requests written in another European
 * language over a catalog described in English. A small dictionary (`src/resolver/foreign_words.ts`) reads the
 * commonest action verbs, with their everyday inflections, and computing nouns with no English cognate, in
 * Spanish, Portuguese, French, Italian, German, Dutch and Polish.
 */
import assert from "node:assert/strict";
import { ACTION, requestAction } from "../../src/resolver/actions.ts";
import { rankQuery, type ResolverIndex } from "../../src/resolver/mod.ts";
import { benchIndex, serverIndex, tool } from "./_bench_catalog.ts";

/** The first tool search_tools ranks for a request. */
function first(index: ResolverIndex, request: string): string | undefined {
  return rankQuery(index, request, { maxHits: 5 }).hits[0]?.tool.short;
}

const files = serverIndex("files", "Local files and folders", [
  tool("create_file", "Create a new file with the given content."),
  tool("create_folder", "Create a new folder."),
  tool("delete_file", "Delete a file."),
  tool("delete_folder", "Delete a folder and everything in it."),
  tool("read_file", "Read the contents of a file."),
]);

const weather = serverIndex("weather", "Forecasts and conditions", [
  tool("get_weather", "Current weather conditions for a place."),
  tool("get_air_quality", "Air quality index and pollutants for a place."),
  tool("get_flood_forecast", "River discharge and flood forecast for coordinates."),
]);

Deno.test("440: nouns with no English cognate reach the tool that names them (#42)", () => {
  // German, Dutch and Polish words for file and folder, whatever the verb.
  assert.equal(first(files, "erstelle einen neuen Ordner projekte"), "create_folder");
  assert.equal(first(files, "lösche den Ordner alt"), "delete_folder");
  assert.equal(first(weather, "Wie ist das Wetter in Leipzig?"), "get_weather");
  assert.equal(first(weather, "Müssen wir bei 48.21, 16.37 mit Hochwasser rechnen?"), "get_flood_forecast");
});

Deno.test("440: an inflected verb of another language is its English verb (#42)", () => {
  // Imperatives and present forms, one with a pronoun attached ("créame"), of verbs no suffix rule maps to
  // English: the file named is the same, the verb picks the tool.
  assert.equal(first(files, "créame una carpeta proyectos"), "create_folder");
  assert.equal(first(files, "lösche die Datei alt"), "delete_file");
  assert.equal(first(files, "elimina la carpeta vieja"), "delete_folder");
  assert.equal(first(files, "verwijder het bestand oud"), "delete_file");
  assert.equal(first(files, "usuń plik raport"), "delete_file");
  assert.equal(first(files, "zeige mir die Datei notizen"), "read_file");
});

Deno.test("441: a verb of another language is the request's action (#42)", async () => {
  assert.equal(requestAction("borra el archivo notas.txt"), ACTION.delete);
  assert.equal(requestAction("usuń plik raport.txt"), ACTION.delete);
  assert.equal(requestAction("verwijder de notitie"), ACTION.delete);
  assert.equal(requestAction("zeige mir die Datei notizen.txt") & ACTION.read, ACTION.read);
  assert.equal(requestAction("créame una carpeta nueva") & ACTION.create, ACTION.create);
  assert.equal(requestAction("verstuur het bericht naar Anna") & ACTION.send, ACTION.send);
  // Publishing a message sends it: the tool that posts one, not the channel list.
  const heldout2 = await benchIndex("heldout2_catalog.json");
  assert.equal(first(heldout2, "publicar un mensaje en el canal de Slack"), "post_message");
});

Deno.test("442: asking what is known about a thing, and forgetting, in other languages (#42)", async () => {
  const plain = await benchIndex("plain_catalog.json");
  // A question for what is kept about a thing is a search of the memory, as "what do you know about Ana?" is.
  assert.equal(first(plain, "¿Qué sabes de Ana?"), "search_nodes");
  assert.equal(first(plain, "Was weißt du über Bob?"), "search_nodes");
  assert.equal(first(plain, "co wiesz o Kasi?"), "search_nodes");
  assert.equal(requestAction("wat weet je over Piet?"), ACTION.search);
  // Having forgotten what was said asks what the memory holds.
  const forgot = first(
    plain,
    "Qu'est-ce que tu sais sur mon fournisseur, la Fromagerie Martin ? Je dois le rappeler ce soir et j'ai " +
      "complètement oublié ce qu'on s'était dit la dernière fois.",
  );
  assert.ok(["search_nodes", "open_nodes", "read_graph"].includes(forgot ?? ""), forgot);
});

Deno.test("443: a polite request or a question of ability in another language asks for its verb (#42)", () => {
  // The verb follows the modal in Romance languages and Polish, and ends the clause in German and Dutch.
  assert.equal(requestAction("¿Puedes borrar el archivo notas.txt?"), ACTION.delete);
  assert.equal(requestAction("Kannst du die Datei alt.txt löschen?"), ACTION.delete);
  assert.equal(requestAction("kun je het bestand oud.txt verwijderen?"), ACTION.delete);
  assert.equal(requestAction("możesz usunąć plik raport.txt"), ACTION.delete);
  assert.equal(requestAction("Por favor, borra la carpeta vieja"), ACTION.delete);
  assert.equal(first(files, "Kannst du die Datei alt löschen?"), "delete_file");
  assert.equal(first(files, "¿Puedes crear una carpeta proyectos?"), "create_folder");
});
