import type { WordsOf } from '../../ui/i18n.js'
import type { keys as en } from '../en/keys.js'

export const keys: WordsOf<typeof en> = {
  'keys.prefix': 'Prefixo',
  'keys.scopes': 'Escopos',
  'keys.lastUsed': 'Último uso',
  'keys.expires': 'Expira em',
  'keys.never': 'Nunca',
  'keys.rotateName': 'Trocar {name}',
  'keys.revokeName': 'Revogar {name}',
  'keys.noGrace': 'Nenhum: o valor antigo para na hora',
  'keys.rotateWarning': 'Um novo valor é criado; o antigo para na hora.',
  'keys.rotateGraceWarning': 'Um novo valor é criado; o antigo funciona até o fim do prazo de tolerância.',
  'keys.title': 'Chave {name}',
  'keys.scopesWhat': 'os escopos',
  'keys.addresses': 'Endereços permitidos (CIDR, separados por vírgula; vazio para qualquer um)',
  'keys.origins': 'Origens permitidas (separadas por vírgula; vazio para qualquer uma)',
  'keys.expiresOn': 'Expira em (vazio: nunca)',
  'keys.clientKeys': 'Client Keys',
  'keys.help':
    'As Client Keys permitem que seus back-ends chamem a API. Nunca coloque uma em um navegador ou app.',
  'keys.create': 'Criar chave',
  'keys.what': 'as chaves',
  'keys.none': 'Nenhuma Client Key ainda.',
  'keys.rotateNow': 'Trocar agora',
  'keys.revokeNow': 'Revogar agora',
  'keys.revokeWarning': 'As chamadas com esta chave param na hora.',
  'keys.actions': 'Trocar ou revogar',
  'keys.graceLabel': 'O valor antigo continua funcionando por',
  'keys.keyWhat': 'a chave',
  'keys.new': 'Nova Client Key',
}
