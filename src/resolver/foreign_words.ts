/**
 * The commonest words of requests to tools in seven European languages (Spanish, Portuguese, French,
 * Italian, German, Dutch, Polish), mapped to the English word a tool's description uses: action verbs with
 * their everyday inflections (infinitive, imperative, present, past participle: `borra`, `löschen`,
 * `gelöscht`, `supprimez`, `verwijder`, `usuń` -> delete) and computing nouns that are no cognate of their
 * English word (`carpeta`, `Ordner` -> folder; `chiave`, `Schlüssel` -> key). General vocabulary written from
 * a dictionary, not from any request of the benchmark sets. `lexicon.ts` reads it for a word the catalog does
 * not know; `actions.ts` reads a request's verb as its action.
 *
 * @module
 */
import { isEnglishStem } from "./english.ts";
import { fold, stem } from "./tokenize.ts";

/**
 * A form that is also a common English word is left out ("lies", German for "read!"; "listen", German for
 * "lists"): in an English request it is that word.
 *
 * Verbs: the English verb, then per language the infinitives (`|` joins a German separable prefix:
 * `an|legen`), with `=` before forms written out (irregular stems, Dutch and Polish forms, which no simple
 * rule gives). Regular Romance and German forms are derived by {@link inflect}.
 */
const VERBS: readonly [string, string][] = [
  [
    "delete",
    "es:borrar,eliminar,suprimir pt:apagar,excluir,eliminar,deletar fr:supprimer,effacer " +
    "it:eliminare,cancellare,rimuovere de:löschen,entfernen nl:=verwijderen,verwijder,wissen,wis " +
    "pl:=usunąć,usuń,usuńcie,usuwać,usuwaj,skasować,skasuj,wykasuj",
  ],
  [
    "create",
    "es:crear pt:criar fr:créer it:creare de:erstellen,erzeugen,an|legen " +
    "nl:=aanmaken,maak,creëren,creëer pl:=utworzyć,utwórz,utwórzcie,stworzyć,stwórz,tworzyć,twórz",
  ],
  [
    "read",
    "es:leer pt:ler fr:=lire,lis,lisez it:leggere de:=lesen nl:=lezen " +
    "pl:=czytać,czytaj,przeczytać,przeczytaj,odczytać,odczytaj",
  ],
  [
    "write",
    "es:escribir pt:escrever fr:=écrire,écris,écrivez it:scrivere de:=schreiben,schreib,schreibe " +
    "nl:=schrijven,schrijf pl:=pisać,pisz,napisać,napisz",
  ],
  [
    "save",
    "es:guardar pt:salvar,gravar,guardar fr:enregistrer,sauvegarder it:salvare,memorizzare " +
    "de:speichern,ab|speichern nl:=opslaan,bewaren,bewaar pl:=zapisać,zapisz,zapiszcie,zachować,zachowaj",
  ],
  [
    "search",
    "es:buscar pt:procurar,pesquisar fr:chercher,rechercher it:cercare,ricercare de:suchen,durch|suchen " +
    "nl:=zoeken,zoek,opzoeken pl:=szukać,szukaj,wyszukać,wyszukaj,poszukaj",
  ],
  [
    "find",
    "es:=encontrar,encuentra,encuentre,hallar pt:encontrar,achar fr:trouver it:trovare " +
    "de:=finden nl:=vinden,vind pl:=znaleźć,znajdź,znajdźcie",
  ],
  [
    "show",
    "es:=mostrar,muestra,muestre,muestrame,enseñar pt:mostrar fr:afficher,montrer it:mostrare,visualizzare " +
    "de:zeigen,an|zeigen nl:=tonen,weergeven pl:=pokazać,pokaż,pokażcie,wyświetlić,wyświetl",
  ],
  [
    "list",
    "es:listar,enumerar pt:listar fr:lister,énumérer it:elencare de:auf|listen " +
    "nl:=opsommen pl:=wylistować,wypisać,wypisz,wymienić,wymień",
  ],
  [
    "get",
    "es:obtener,conseguir pt:obter fr:obtenir,récupérer it:ottenere,recuperare de:holen,ab|rufen " +
    "nl:=ophalen pl:=uzyskać,uzyskaj,pobrać,pobierz",
  ],
  [
    "send",
    "es:enviar,mandar pt:enviar,mandar fr:envoyer it:inviare,mandare,spedire de:senden,schicken,versenden " +
    "nl:=sturen,stuur,versturen,verstuur,verzenden,verzend pl:=wysłać,wyślij,wyślijcie,wysyłać,wysyłaj",
  ],
  [
    "update",
    "es:actualizar pt:atualizar fr:actualiser it:aggiornare de:aktualisieren " +
    "nl:=bijwerken pl:=zaktualizować,zaktualizuj,aktualizuj",
  ],
  [
    "change",
    "es:cambiar,modificar pt:mudar,alterar,modificar fr:changer,modifier it:cambiare,modificare " +
    "de:=ändern,ändere,änder,bearbeiten,bearbeite nl:=wijzigen,wijzig,veranderen," +
    "verander,bewerken,bewerk pl:=zmienić,zmień,zmieńcie,edytować,edytuj,zmodyfikuj",
  ],
  [
    "rename",
    "es:renombrar pt:renomear fr:renommer it:rinominare de:um|benennen nl:=hernoemen,hernoem pl:=przemianuj",
  ],
  [
    "move",
    "es:=mover,mueve,mueva pt:mover fr:déplacer it:spostare de:verschieben,=verschiebe " +
    "nl:=verplaatsen,verplaats pl:=przenieść,przenieś,przesuń",
  ],
  [
    "copy",
    "es:copiar pt:copiar fr:copier it:copiare de:kopieren nl:=kopiëren,kopieer pl:=skopiować,skopiuj,kopiuj",
  ],
  [
    "add",
    "es:añadir,agregar pt:adicionar,acrescentar fr:ajouter it:aggiungere de:=hinzufügen " +
    "nl:=toevoegen pl:=dodać,dodaj,dodajcie",
  ],
  ["open", "es:abrir pt:abrir fr:ouvrir it:aprire de:=öffnen,öffne nl:=openen pl:=otworzyć,otwórz"],
  [
    "download",
    "es:descargar pt:baixar fr:télécharger it:scaricare de:herunter|laden nl:=downloaden pl:=ściągnąć,ściągnij",
  ],
  [
    "upload",
    "es:subir pt:carregar fr:téléverser it:caricare de:hoch|laden nl:=uploaden pl:=przesłać,prześlij,wgrać,wgraj",
  ],
  [
    "run",
    "es:ejecutar,lanzar pt:executar fr:exécuter,lancer it:eseguire,avviare de:aus|führen,starten " +
    "nl:=uitvoeren,starten pl:=uruchomić,uruchom,wykonać,wykonaj",
  ],
  [
    "stop",
    "es:detener,parar pt:parar fr:arrêter it:fermare,arrestare de:stoppen,an|halten nl:=stoppen " +
    "pl:=zatrzymać,zatrzymaj",
  ],
  [
    "close",
    "es:=cerrar,cierra,cierre pt:fechar fr:fermer it:chiudere de:=schließen,schließe " +
    "nl:=sluiten,sluit pl:=zamknąć,zamknij",
  ],
  [
    "merge",
    "es:fusionar pt:mesclar fr:fusionner it:unire de:zusammen|führen nl:=samenvoegen pl:=scalić,scal",
  ],
  [
    "publish",
    "es:publicar pt:publicar fr:publier it:pubblicare de:veröffentlichen nl:=publiceren,publiceer " +
    "pl:=opublikować,opublikuj",
  ],
  [
    "navigate",
    "es:navegar pt:navegar fr:naviguer it:navigare de:navigieren nl:=navigeren,navigeer pl:=nawiguj,przejdź",
  ],
  [
    "think",
    "es:=pensar,piensa,piense pt:pensar fr:penser,réfléchir it:pensare,ragionare de:=denken,nachdenken " +
    "nl:=denken,nadenken pl:=myśleć,pomyśl,przemyśl",
  ],
  [
    "remember",
    "es:=recordar,recuerda,recuerde pt:lembrar fr:=retenir,retiens,mémoriser it:ricordare " +
    "de:=merken,merke,merk,behalten nl:=onthouden,onthoud pl:=zapamiętać,zapamiętaj",
  ],
  [
    "forget",
    "es:olvidar pt:esquecer fr:oublier it:dimenticare de:=vergessen,vergiss nl:=vergeten,vergeet " +
    "pl:=zapomnieć,zapomnij",
  ],
  ["record", "es:grabar"],
  [
    "note",
    "es:anotar,apuntar pt:anotar fr:noter it:annotare,segnare de:notieren nl:=noteren,noteer " +
    "pl:=zanotować,zanotuj",
  ],
  [
    "cancel",
    "es:cancelar,anular pt:cancelar fr:annuler it:annullare de:=stornieren,abbrechen " +
    "nl:=annuleren,annuleer pl:=anulować,anuluj",
  ],
  [
    "check",
    "es:comprobar,verificar,revisar pt:verificar,conferir fr:vérifier it:controllare,verificare " +
    "de:prüfen,überprüfen,=nachsehen nl:=controleren,controleer,nakijken pl:=sprawdzić,sprawdź",
  ],
  [
    "calculate",
    "es:calcular pt:calcular fr:calculer it:calcolare de:berechnen,=rechne,ausrechnen nl:=berekenen,bereken " +
    "pl:=obliczyć,oblicz,policz",
  ],
  [
    "share",
    "es:compartir pt:compartilhar,partilhar fr:partager it:condividere de:teilen,frei|geben nl:=delen,deel " +
    "pl:=udostępnić,udostępnij",
  ],
  [
    "reply",
    "es:responder,contestar pt:responder fr:répondre it:rispondere de:antworten,beantworten " +
    "nl:=antwoorden,antwoord,beantwoorden,beantwoord pl:=odpowiedzieć,odpowiedz,odpisz",
  ],
  [
    "summarize",
    "es:resumir pt:resumir fr:résumer it:riassumere de:zusammen|fassen nl:=samenvatten " +
    "pl:=podsumować,podsumuj,streść",
  ],
  [
    "generate",
    "es:generar pt:gerar fr:générer it:generare de:generieren nl:=genereren,genereer pl:=wygenerować,wygeneruj",
  ],
  [
    "insert",
    "es:insertar pt:inserir fr:insérer it:inserire,=inserisci de:ein|fügen nl:=invoegen " +
    "pl:=wstawić,wstaw",
  ],
  [
    "translate",
    "es:traducir pt:traduzir fr:traduire it:tradurre,=traduci de:übersetzen nl:=vertalen,vertaal " +
    "pl:=przetłumaczyć,przetłumacz",
  ],
  [
    "schedule",
    "es:programar,agendar pt:agendar fr:planifier,programmer it:programmare,pianificare de:planen " +
    "nl:=plannen,inplannen pl:=zaplanować,zaplanuj",
  ],
];

/** Nouns (and a few other words) a tool's English names with another word: the English word, then its forms. */
const NOUNS: readonly [string, string][] = [
  [
    "file",
    "archivo archivos fichero ficheros arquivo arquivos ficheiro ficheiros fichier fichiers datei dateien " +
    "bestand bestanden plik pliki pliku plików",
  ],
  [
    "folder",
    "carpeta carpetas pasta pastas dossier dossiers cartella cartelle ordner mappe mapje folderze folderu",
  ],
  [
    "directory",
    "directorio directorios diretório diretórios répertoire répertoires verzeichnis verzeichnisse " +
    "katalog katalogu",
  ],
  [
    "key",
    "clave claves llave chave chaves clé clés chiave chiavi schlüssel sleutel sleutels klucz klucza klucze",
  ],
  ["screen", "pantalla ecrã écran schermo bildschirm scherm ekran ekranu"],
  ["screenshot", "captura capturas schermata bildschirmfoto zrzut"],
  ["browser", "navegador navigateur navigatore brauzer przeglądarka przeglądarce przeglądarki"],
  ["weather", "wetter weer pogoda pogody"],
  ["air", "aire luft lucht powietrze powietrza"],
  ["water", "agua água eau acqua wasser woda wody"],
  [
    "flood",
    "inundación inundações inundação inondation inondations alluvione hochwasser überschwemmung " +
    "overstroming powódź",
  ],
  [
    "forecast",
    "pronóstico previsão previsión prévision prévisions previsioni vorhersage voorspelling prognoza",
  ],
  ["note", "nota notas notiz notizen notitie notities notatka notatki notatkę"],
  ["profile", "perfil perfiles perfis profil profils profilo profiel profielen"],
  ["title", "título títulos titre titolo titel tytuł tytułu"],
  ["row", "fila filas righe zeile zeilen rij rijen wiersz wiersze"],
  [
    "column",
    "columna columnas coluna colunas colonne colonnes colonna spalte spalten kolom kolommen kolumna kolumny",
  ],
  [
    "message",
    "mensaje mensajes mensagem mensagens messaggio messaggi nachricht nachrichten bericht berichten " +
    "wiadomość wiadomości",
  ],
  ["channel", "canal canales canais canaux canale canali kanal kanäle kanaal kanalen kanał kanale"],
  [
    "user",
    "usuario usuarios usuário usuários utilisateur utilisateurs utente utenti benutzer nutzer gebruiker " +
    "gebruikers użytkownik użytkownika",
  ],
  ["password", "contraseña senha passwort wachtwoord hasło"],
  ["page", "página páginas pagine seite seiten strona stronę"],
  ["image", "imagen imágenes imagem imagens immagini bild bilder afbeelding obraz obrazek"],
  ["photo", "fotos foto zdjęcie zdjęcia"],
  ["list", "lista listas liste lijst lijsten"],
  ["table", "tabla tablas tabela tabelas tableau tableaux tabella tabelle tabel tabellen"],
  ["meeting", "reunión reuniones reunião réunion riunione besprechung vergadering spotkanie"],
  ["event", "evento eventos événement evenement veranstaltung wydarzenie"],
  ["calendar", "calendario calendário calendrier kalender kalendarz"],
  ["task", "tarea tareas tarefa tarefas tâche tâches compito aufgabe aufgaben taak zadanie zadania"],
  ["address", "dirección direcciones endereço morada adresse indirizzo adres adresu"],
  ["location", "ubicación localização emplacement posizione standort locatie lokalizacja"],
  ["city", "ciudad cidade ville città stadt stad miasto"],
  ["today", "hoy hoje aujourd'hui oggi heute vandaag dzisiaj dziś"],
  ["tomorrow", "mañana amanhã demain domani morgen jutro"],
  ["yesterday", "ayer ontem ieri gestern gisteren wczoraj"],
  ["time", "uhrzeit zeit tijd czas godzina godzinie"],
  ["date", "fecha datum"],
  ["word", "palabra palabras palavra palavras parola wort wörter woord woorden słowo słowa"],
  ["text", "texto textos texte testo tekst"],
  ["content", "contenido conteúdo contenu contenuto inhalt inhoud zawartość"],
  ["size", "tamaño tamanho taille dimensione größe grootte rozmiar"],
  ["number", "nummer zahl zahlen getal liczba liczby"],
  ["sum", "summe"],
  ["change", "änderung änderungen wijziging wijzigingen zmiana zmiany"],
  ["comment", "kommentar kommentare opmerking opmerkingen komentarz komentarze"],
  ["link", "enlace enlaces collegamento verknüpfung koppeling odnośnik"],
  ["document", "dokument dokumente dokumenty dokumentu"],
  [
    "invoice",
    "factura facturas fatura faturas facture factures fattura fatture rechnung rechnungen factuur faktura",
  ],
  ["price", "preis preise prijs cena ceny"],
  ["history", "verlauf geschiedenis historia"],
  ["memory", "gedächtnis geheugen pamięć pamięci"],
  ["branch", "zweig gałąź"],
  ["reading", "lectura leitura lettura"],
  ["step", "paso pasos passo passos schritt schritte stap stappen krok kroki"],
  ["search", "búsqueda recherche ricerca suche zoekopdracht wyszukiwanie"],
  ["repository", "repozytorium"],
  ["request", "solicitud solicitudes solicitação pedido demande requête richiesta anfrage verzoek żądanie"],
  ["merge", "fusión fusão fusione zusammenführung samenvoeging scalenie"],
  ["email", "correo correos courriel"],
  ["permission", "permiso permisos permissão autorisation permesso berechtigung toestemming uprawnienie"],
  ["error", "fehler fout błąd błędu errore"],
];

/** Everyday forms of a regular infinitive of a language: imperatives, present, past participle. */
function inflect(lang: string, infinitive: string): string[] {
  const out = [infinitive];
  const base = (n: number) => infinitive.slice(0, -n);
  const add = (stem: string, endings: string) => out.push(...endings.split(" ").map((e) => stem + e));
  if (lang === "es" || lang === "pt") {
    const b = base(2);
    if (infinitive.endsWith("ar")) add(b, "a e an en");
    else add(b, "e a en an");
  } else if (lang === "fr") {
    if (infinitive.endsWith("er")) add(base(2), "e ez es ons");
    else if (infinitive.endsWith("ir")) add(base(2), "is it issez");
    else if (infinitive.endsWith("re")) add(base(2), "s ez");
  } else if (lang === "it") {
    const b = base(3);
    if (infinitive.endsWith("are")) add(b, "a i ate");
    else if (infinitive.endsWith("ere")) add(b, "i a ete");
    else add(b, "i a ite isci");
  } else if (lang === "de") {
    const [prefix, verb] = infinitive.includes("|")
      ? infinitive.split("|") as [string, string]
      : ["", infinitive];
    const b = verb.endsWith("en") ? verb.slice(0, -2) : verb.slice(0, -1);
    out[0] = prefix + verb;
    // A separable verb's imperative puts its prefix last ("leg … an"): only its joined forms are words here.
    if (!prefix) add(b, " e t st");
  }
  return out;
}

/** Object pronouns a Spanish or Italian imperative takes as a suffix (`bórralo`, `créame`, `mostrami`). */
const CLITIC = /(?:me|te|lo|la|los|las|le|les|nos|mi|ti|ci|li|ne|gli|melo|selo|glielo)$/;

let verbs: Map<string, string> | undefined;
let verbStems: Map<string, string> | undefined;
let nouns: Map<string, string> | undefined;

function build(): void {
  verbs = new Map();
  nouns = new Map();
  for (const [english, langs] of VERBS) {
    for (const part of langs.split(/ (?=[a-z]{2}:)/)) {
      const [lang, list] = [part.slice(0, 2), part.slice(3)];
      const [regular, written] = list.startsWith("=")
        ? ["", list.slice(1)]
        : list.split(",=") as [string, string?];
      for (const w of (written ?? "").split(",").filter(Boolean)) verbs.set(fold(w), english);
      for (const infinitive of regular.split(",").filter(Boolean)) {
        const [first, ...forms] = inflect(lang, fold(infinitive));
        verbs.set(first!, english);
        // A derived form that is an English word ("finde", "tire") is left to English.
        for (const f of forms) {
          if (f.length >= 4 && !isEnglishStem(stem(f)) && !verbs.has(f)) verbs.set(f, english);
        }
      }
    }
  }
  for (const [english, words] of NOUNS) for (const w of words.split(" ")) nouns.set(fold(w), english);
  verbStems = new Map([...verbs].map(([form, english]) => [stem(form), english]));
}

/**
 * The English verb a folded word of another language inflects (`borra`, `supprimez`, `gelöscht`, `usuń`,
 * `créame` -> delete… create), or undefined.
 */
export function foreignVerb(word: string): string | undefined {
  if (!verbs) build();
  const known = verbs!.get(word);
  if (known !== undefined || word.length < 6) return known;
  const bare = word.replace(CLITIC, "");
  return bare !== word ? verbs!.get(bare) : undefined;
}

/** The English verb of the stem of a verb form of another language (`legger`, from "leggere": read). */
export function foreignVerbOfStem(stemmed: string): string | undefined {
  if (!verbStems) build();
  return verbStems!.get(stemmed);
}

/** The English word of a folded word of another language: a verb's ({@link foreignVerb}) or a noun's. */
export function foreignWord(word: string): string | undefined {
  if (!nouns) build();
  return foreignVerb(word) ?? nouns!.get(word);
}
