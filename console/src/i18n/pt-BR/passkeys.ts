import type { WordsOf } from '../../ui/i18n.js'
import type { passkeys as en } from '../en/passkeys.js'

export const passkeys: WordsOf<typeof en> = {
  'passkey.facts': 'adicionada em {added} · último uso {used} · {backup}',
  'passkey.never': 'nunca',
  'passkey.backedUp': 'com backup',
  'passkey.notBackedUp': 'sem backup',
  'passkey.off': 'As passkeys estão desativadas neste tenant. Um administrador as ativa com',
  'passkey.offAfter': 'em Configurações.',
  'passkey.renameName': 'Renomear {name}',
  'passkey.removeName': 'Remover {name}',
  'passkey.added': 'Passkey “{name}” adicionada.',
  'passkey.renamed': 'Renomeada para “{name}”.',
  'passkey.noneYet': 'Nenhuma passkey ainda.',
  'passkey.none': 'Nenhuma passkey.',
  'passkey.newestOfYours': {
    one: 'São mostradas as {shown} mais recentes da sua {count} passkey.',
    other: 'São mostradas as {shown} mais recentes das suas {count} passkeys.',
  },
  'passkey.newestOf': {
    one: 'São mostradas as {shown} mais recentes de {count} passkey.',
    other: 'São mostradas as {shown} mais recentes de {count} passkeys.',
  },
  'passkey.noSupport': 'Este navegador não tem suporte a passkeys (WebAuthn).',
  'passkey.newName': 'Novo nome',
  'passkey.saveName': 'Salvar nome',
  'passkey.rename': 'Renomear',
  'passkey.removeNow': 'Remover agora',
  'passkey.removeWarning': 'Você não poderá mais entrar com ela.',
  'passkey.removed': 'Passkey removida.',
  'passkey.title': 'Passkeys',
  'passkey.yours': 'suas passkeys',
  'passkey.newPasskeyName': 'Nome da nova passkey (opcional)',
  'passkey.add': 'Adicionar uma passkey',
  'passkey.what': 'as passkeys',
  'passkey.userWarning': 'O usuário não poderá mais entrar com ela.',
  'passkey.signIn': 'Entrar com uma passkey',
}
