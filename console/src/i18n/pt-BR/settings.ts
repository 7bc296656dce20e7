import type { WordsOf } from '../../ui/i18n.js'
import type { settings as en } from '../en/settings.js'

export const settings: WordsOf<typeof en> = {
  'settings.saved': 'Configurações salvas. Alterado: {changed}.',
  'settings.nothing': 'Nada foi alterado.',
  'settings.invalid': 'Algumas configurações não são válidas:',
  'settings.save': 'Salvar configurações',
  'settings.secretDone':
    'Um novo segredo de assinatura está em uso; os tokens assinados com o anterior continuam válidos até expirarem.',
  'settings.keyDone': 'Uma nova chave de assinatura está em uso (kid {kid}).',
  'settings.rotation': 'Segredo e chave de assinatura',
  'settings.rotateWhen': 'Troque quando um segredo pode ter vazado, ou periodicamente.',
  'settings.secretHelp':
    'O segredo de assinatura assina os tokens de acesso enquanto forem assinados com HS256. Um novo entra em uso na hora; os tokens assinados com o anterior continuam válidos até expirarem.',
  'settings.keyHelp':
    'A chave de assinatura é o par de chaves dos tokens EdDSA ou ES256 e dos ID tokens que os aplicativos recebem. Uma nova entra em uso na hora; a chave pública anterior continua publicada por 7 dias, para que os tokens que ela assinou ainda sejam verificados.',
  'settings.rotateSecret': 'Trocar o segredo de assinatura',
  'settings.rotateSecretNow': 'Trocar o segredo agora',
  'settings.rotateKey': 'Trocar a chave de assinatura',
  'settings.rotateKeyNow': 'Trocar a chave agora',
  'settings.what': 'as configurações',
  'settings.auth': 'Configurações de autenticação',
  'settings.idpHelp': 'Entrar com Google, Microsoft, GitHub ou outro provedor OpenID Connect.',
  'settings.manageIdp': 'Gerenciar provedores de identidade',
}
